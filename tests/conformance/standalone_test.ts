// The conformance suite on `RedisClient` on one redis-server.
import { conformance } from "./conformance.ts";
import { standalone } from "./kinds.ts";

conformance(standalone);
