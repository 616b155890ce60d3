# `workerd serve examples/workers/config.capnp` after bundling worker.ts into worker.js (see
# worker.ts). Serves on 127.0.0.1:8787; the `internet` service lets the worker reach a
# redis-server on a loopback or private address (`local`), which Cloudflare itself does not.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-09-01",
  bindings = [
    (name = "REDIS_URL", text = "redis://127.0.0.1:6379"),
    (name = "COUNTER", durableObjectNamespace = "Counter"),
  ],
  durableObjectNamespaces = [(className = "Counter", uniqueKey = "edge-redis-example-counter")],
  durableObjectStorage = (inMemory = void),
);
