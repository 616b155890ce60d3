// The test worker without WebSocketPair (tests/workers/_no_probe.ts runs first): the fallback of a
// module-scope client where the request of a socket cannot be told before writing.
import "./_no_probe.ts";
export { default, Holder } from "./worker.ts";
