// The conformance suite on `RedisClusterClient` on a real 3-primary / 3-replica cluster.
import { conformance } from "./conformance.ts";
import { cluster } from "./kinds.ts";

conformance(cluster);
