/** The library name sent with `CLIENT SETINFO LIB-NAME`. */
export const LIB_NAME = "edge-redis";
/** The library version sent with `CLIENT SETINFO LIB-VER`; kept equal to deno.json's. */
export const VERSION = "0.1.0";
