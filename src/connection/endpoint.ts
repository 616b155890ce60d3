/**
 * The endpoint type and helpers, kept here under their old path for the connection's files: the
 * one definition is `src/endpoint.ts`.
 *
 * @module
 */

export {
  type Endpoint,
  endpointKey,
  formatEndpoint,
  parseEndpoint,
  sameEndpoint,
  splitEndpoint,
} from "../endpoint.ts";
