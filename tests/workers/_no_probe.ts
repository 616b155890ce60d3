// Evaluated before the client's modules (tests/workers/worker_no_probe.ts): hides WebSocketPair
// (workerd keeps it on the global's prototype: an own property shadows it), so the connection has
// no probe of the request a socket belongs to and workerd's refusal of a write from another
// request is what the client meets.
Object.defineProperty(globalThis, "WebSocketPair", { value: undefined, configurable: true });
