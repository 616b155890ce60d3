// The conformance suite on `RedisSentinelClient` on a real master, replica and three sentinels.
import { conformance } from "./conformance.ts";
import { sentinel } from "./kinds.ts";

conformance(sentinel);
