// commandKeys against the server's own COMMAND GETKEYS, for the arguments of every typed command
// method, for a corpus of raw commands and for seeded random argument lists of every command in
// the table; and the generated table against the live COMMAND INFO.
import { after, before, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { RedisClient, ReplyError } from "../../mod.ts";
import { RedisCommands } from "../../src/commands/commands.ts";
import type { Transform } from "../../src/commands/command_runner.ts";
import type { RedisArgument, RespValue } from "../../src/resp/types.ts";
import { commandKeys, parseCommandInfo } from "../../src/commands/command_keys.ts";
import type { CommandInfo } from "../../src/commands/command_info.ts";
import { COMMAND_TABLE, KEY_SPEC_SERVER } from "../../src/commands/key_spec.ts";
import { decodeCommandTable, formatCommandRow } from "../../src/commands/_key_spec_row.ts";
import { type RedisServer, startRedis } from "../_helpers/redis_server.ts";
import { assertNoLeaks, markLeakBaseline } from "../_helpers/leaks.ts";

const COMMAND_ROWS = decodeCommandTable(COMMAND_TABLE);

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = new TextDecoder();

/** Records the arguments of every command a typed method sends; answers null. */
class ArgsRecorder extends RedisCommands<string> {
  sent: RedisArgument[][] = [];
  _run(
    args: RedisArgument[],
    _transform: Transform | undefined,
    _flags: number,
    _blockMs?: number,
  ): Promise<unknown> {
    this.sent.push(args);
    return Promise.resolve(null);
  }
}

type Call = (c: ArgsRecorder) => unknown;

const geoFrom = { from: { member: "m" }, by: { radius: 1, unit: "km" as const } };
const geoBox = {
  from: { longitude: 1, latitude: 2 },
  by: { width: 1, height: 2, unit: "m" as const },
  order: "ASC" as const,
  count: 3,
  any: true,
};

/** Plausible arguments for every typed method; some methods called with several option sets. */
const METHOD_CALLS: Record<string, Call> = {
  get: (c) => c.get("k"),
  set: (c) => [c.set("k", "v"), c.set("k", "v", { ex: 10, nx: true, get: true })],
  mget: (c) => c.mget("a", "b", "c"),
  mset: (c) => [c.mset({ a: "1", b: 2 }), c.mset([["a", "1"]])],
  msetnx: (c) => c.msetnx({ a: "1", b: "2" }),
  setnx: (c) => c.setnx("k", "v"),
  setex: (c) => c.setex("k", 10, "v"),
  psetex: (c) => c.psetex("k", 1000, "v"),
  getset: (c) => c.getset("k", "v"),
  getdel: (c) => c.getdel("k"),
  getex: (c) => [c.getex("k"), c.getex("k", { px: 100 }), c.getex("k", { persist: true })],
  append: (c) => c.append("k", "v"),
  strlen: (c) => c.strlen("k"),
  incr: (c) => c.incr("k"),
  incrby: (c) => c.incrby("k", 2),
  incrbyfloat: (c) => c.incrbyfloat("k", 1.5),
  decr: (c) => c.decr("k"),
  decrby: (c) => c.decrby("k", 2),
  getrange: (c) => c.getrange("k", 0, -1),
  setrange: (c) => c.setrange("k", 1, "v"),
  lcs: (c) => c.lcs("a", "b"),
  lcsLen: (c) => c.lcsLen("a", "b"),
  lcsIdx: (c) => c.lcsIdx("a", "b", { minMatchLen: 2, withMatchLen: true }),
  del: (c) => [c.del("a"), c.del("a", "b", "c")],
  unlink: (c) => c.unlink("a", "b"),
  exists: (c) => c.exists("a", "b"),
  expire: (c) => c.expire("k", 10, { nx: true }),
  pexpire: (c) => c.pexpire("k", 1000),
  expireat: (c) => c.expireat("k", 2_000_000_000, { gt: true }),
  pexpireat: (c) => c.pexpireat("k", 2_000_000_000_000),
  expiretime: (c) => c.expiretime("k"),
  pexpiretime: (c) => c.pexpiretime("k"),
  ttl: (c) => c.ttl("k"),
  pttl: (c) => c.pttl("k"),
  persist: (c) => c.persist("k"),
  type: (c) => c.type("k"),
  rename: (c) => c.rename("a", "b"),
  renamenx: (c) => c.renamenx("a", "b"),
  keys: (c) => c.keys("*"),
  randomkey: (c) => c.randomkey(),
  touch: (c) => c.touch("a", "b"),
  copy: (c) => [c.copy("a", "b"), c.copy("a", "b", { db: 1, replace: true })],
  dump: (c) => c.dump("k"),
  restore: (c) => c.restore("k", 0, enc("payload"), { replace: true, idletime: 5 }),
  objectEncoding: (c) => c.objectEncoding("k"),
  objectFreq: (c) => c.objectFreq("k"),
  objectIdletime: (c) => c.objectIdletime("k"),
  objectRefcount: (c) => c.objectRefcount("k"),
  sort: (c) => [
    c.sort("k"),
    c.sort("k", { by: "w_*", limit: { offset: 0, count: 5 }, get: ["#", "o_*"], alpha: true }),
  ],
  sortStore: (c) => [
    c.sortStore("k", "dst"),
    c.sortStore("k", "dst", { by: "w_*", get: ["#"], order: "DESC" }),
  ],
  scanPage: (c) => c.scanPage(0, { match: "a*", count: 10, type: "string" }),
  hset: (c) => [c.hset("h", "f", "v"), c.hset("h", { a: "1", b: "2" })],
  hsetnx: (c) => c.hsetnx("h", "f", "v"),
  hget: (c) => c.hget("h", "f"),
  hmget: (c) => c.hmget("h", "a", "b"),
  hgetall: (c) => c.hgetall("h"),
  hdel: (c) => c.hdel("h", "a", "b"),
  hexists: (c) => c.hexists("h", "f"),
  hincrby: (c) => c.hincrby("h", "f", 1),
  hincrbyfloat: (c) => c.hincrbyfloat("h", "f", 1.5),
  hkeys: (c) => c.hkeys("h"),
  hvals: (c) => c.hvals("h"),
  hlen: (c) => c.hlen("h"),
  hstrlen: (c) => c.hstrlen("h", "f"),
  hrandfield: (c) => [c.hrandfield("h"), c.hrandfield("h", 2)],
  hrandfieldWithValues: (c) => c.hrandfieldWithValues("h", 2),
  hscanPage: (c) => c.hscanPage("h", 0, { match: "f*", count: 5 }),
  lpush: (c) => c.lpush("l", "a", "b"),
  rpush: (c) => c.rpush("l", "a"),
  lpushx: (c) => c.lpushx("l", "a"),
  rpushx: (c) => c.rpushx("l", "a", "b"),
  lpop: (c) => [c.lpop("l"), c.lpop("l", 2)],
  rpop: (c) => [c.rpop("l"), c.rpop("l", 2)],
  llen: (c) => c.llen("l"),
  lrange: (c) => c.lrange("l", 0, -1),
  lindex: (c) => c.lindex("l", 0),
  lset: (c) => c.lset("l", 0, "v"),
  linsert: (c) => c.linsert("l", "BEFORE", "p", "v"),
  lrem: (c) => c.lrem("l", 0, "v"),
  ltrim: (c) => c.ltrim("l", 0, 10),
  lpos: (c) => [c.lpos("l", "v"), c.lpos("l", "v", { rank: 2, maxlen: 10 })],
  lposCount: (c) => c.lposCount("l", "v", 0, { rank: 1 }),
  lmove: (c) => c.lmove("a", "b", "LEFT", "RIGHT"),
  lmpop: (c) => [c.lmpop(["a"], "LEFT"), c.lmpop(["a", "b"], "RIGHT", { count: 2 })],
  blpop: (c) => [c.blpop("a", 0), c.blpop(["a", "b"], 1.5)],
  brpop: (c) => c.brpop(["a", "b"], 1),
  blmove: (c) => c.blmove("a", "b", "RIGHT", "LEFT", 0.5),
  blmpop: (c) => [c.blmpop(0, ["a", "b"], "LEFT"), c.blmpop(1, ["a"], "RIGHT", { count: 3 })],
  brpoplpush: (c) => c.brpoplpush("a", "b", 1),
  sadd: (c) => c.sadd("s", "a", "b"),
  srem: (c) => c.srem("s", "a"),
  smembers: (c) => c.smembers("s"),
  sismember: (c) => c.sismember("s", "a"),
  smismember: (c) => c.smismember("s", "a", "b"),
  scard: (c) => c.scard("s"),
  spop: (c) => [c.spop("s"), c.spop("s", 2)],
  srandmember: (c) => [c.srandmember("s"), c.srandmember("s", -2)],
  smove: (c) => c.smove("a", "b", "m"),
  sinter: (c) => c.sinter("a", "b"),
  sintercard: (c) => [c.sintercard(["a", "b"]), c.sintercard(["a"], { limit: 3 })],
  sinterstore: (c) => c.sinterstore("d", "a", "b"),
  sunion: (c) => c.sunion("a", "b"),
  sunionstore: (c) => c.sunionstore("d", "a"),
  sdiff: (c) => c.sdiff("a", "b", "c"),
  sdiffstore: (c) => c.sdiffstore("d", "a", "b"),
  sscanPage: (c) => c.sscanPage("s", "0", { count: 5 }),
  zadd: (c) => [
    c.zadd("z", { score: 1, member: "a" }),
    c.zadd("z", [{ score: 1, member: "a" }, { score: Infinity, member: "b" }], { gt: true }),
  ],
  zaddIncr: (c) => c.zaddIncr("z", { score: 2, member: "a" }, { xx: true }),
  zincrby: (c) => c.zincrby("z", 1, "a"),
  zrem: (c) => c.zrem("z", "a", "b"),
  zscore: (c) => c.zscore("z", "a"),
  zmscore: (c) => c.zmscore("z", "a", "b"),
  zrank: (c) => c.zrank("z", "a"),
  zrevrank: (c) => c.zrevrank("z", "a"),
  zcard: (c) => c.zcard("z"),
  zcount: (c) => c.zcount("z", -Infinity, "(5"),
  zlexcount: (c) => c.zlexcount("z", "-", "+"),
  zrange: (c) => [
    c.zrange("z", 0, -1),
    c.zrange("z", "(1", 5, { byScore: true, rev: true, limit: { offset: 0, count: 2 } }),
  ],
  zrangeWithScores: (c) => c.zrangeWithScores("z", 0, -1),
  zrangestore: (c) => c.zrangestore("d", "z", "[a", "[z", { byLex: true }),
  zremrangebyrank: (c) => c.zremrangebyrank("z", 0, 1),
  zremrangebyscore: (c) => c.zremrangebyscore("z", 0, 10),
  zremrangebylex: (c) => c.zremrangebylex("z", "-", "+"),
  zpopmin: (c) => [c.zpopmin("z"), c.zpopmin("z", 2)],
  zpopmax: (c) => [c.zpopmax("z"), c.zpopmax("z", 2)],
  zrandmember: (c) => [c.zrandmember("z"), c.zrandmember("z", 2)],
  zrandmemberWithScores: (c) => c.zrandmemberWithScores("z", 2),
  zunionstore: (c) => [
    c.zunionstore("d", ["a", "b"]),
    c.zunionstore("d", ["a", "b"], { weights: [1, 2], aggregate: "MAX" }),
  ],
  zinterstore: (c) => c.zinterstore("d", ["a", "b", "c"], { aggregate: "MIN" }),
  zdiffstore: (c) => c.zdiffstore("d", ["a", "b"]),
  zunion: (c) => c.zunion(["a", "b"], { weights: [1, 1] }),
  zunionWithScores: (c) => c.zunionWithScores(["a"]),
  zinter: (c) => c.zinter(["a", "b"]),
  zinterWithScores: (c) => c.zinterWithScores(["a", "b"], { aggregate: "SUM" }),
  zdiff: (c) => c.zdiff(["a", "b"]),
  zdiffWithScores: (c) => c.zdiffWithScores(["a", "b"]),
  zmpop: (c) => [c.zmpop(["a", "b"], "MIN"), c.zmpop(["a"], "MAX", { count: 2 })],
  bzpopmin: (c) => [c.bzpopmin("a", 0), c.bzpopmin(["a", "b"], 1)],
  bzpopmax: (c) => c.bzpopmax(["a", "b"], 0.5),
  bzmpop: (c) => [c.bzmpop(0, ["a", "b"], "MIN"), c.bzmpop(2, ["a"], "MAX", { count: 5 })],
  zscanPage: (c) => c.zscanPage("z", 0, { match: "*" }),
  xadd: (c) => [
    c.xadd("x", "*", { f: "v" }),
    c.xadd("x", "*", [["a", "1"], ["b", "2"]], {
      maxlen: 100,
      approximate: true,
      nomkstream: true,
    }),
  ],
  xrange: (c) => [c.xrange("x"), c.xrange("x", "-", "+", { count: 10 })],
  xrevrange: (c) => c.xrevrange("x", "+", "-", { count: 1 }),
  xread: (c) => [
    c.xread({ a: "0" }),
    c.xread([{ key: "a", id: "0" }, { key: "b", id: "$" }], { count: 5, block: 100 }),
    c.xread({ STREAMS: "0" }),
  ],
  xreadgroup: (c) => [
    c.xreadgroup("g", "c", { a: ">" }),
    c.xreadgroup("STREAMS", "STREAMS", { a: ">", b: "0" }, { count: 1, block: 0, noack: true }),
  ],
  xack: (c) => c.xack("x", "g", "1-0", "2-0"),
  xgroupCreate: (c) => c.xgroupCreate("x", "g", "$", { mkstream: true }),
  xgroupDestroy: (c) => c.xgroupDestroy("x", "g"),
  xgroupCreateConsumer: (c) => c.xgroupCreateConsumer("x", "g", "c"),
  xgroupDelConsumer: (c) => c.xgroupDelConsumer("x", "g", "c"),
  xgroupSetId: (c) => c.xgroupSetId("x", "g", "0", { entriesRead: 3 }),
  xtrim: (c) => [c.xtrim("x", { maxlen: 10 }), c.xtrim("x", { minid: "1-0", limit: 5 })],
  xlen: (c) => c.xlen("x"),
  xdel: (c) => c.xdel("x", "1-0", "2-0"),
  xpending: (c) => c.xpending("x", "g"),
  xpendingRange: (c) =>
    c.xpendingRange("x", "g", { start: "-", end: "+", count: 10, consumer: "c", idle: 5 }),
  xclaim: (c) => c.xclaim("x", "g", "c", 10, ["1-0"], { idle: 1, retrycount: 2, force: true }),
  xclaimJustId: (c) => c.xclaimJustId("x", "g", "c", 10, ["1-0", "2-0"]),
  xautoclaim: (c) => c.xautoclaim("x", "g", "c", 10, "0-0", { count: 5 }),
  xautoclaimJustId: (c) => c.xautoclaimJustId("x", "g", "c", 10, "0-0"),
  xinfoStream: (c) => c.xinfoStream("x"),
  xinfoGroups: (c) => c.xinfoGroups("x"),
  xinfoConsumers: (c) => c.xinfoConsumers("x", "g"),
  setbit: (c) => c.setbit("b", 7, 1),
  getbit: (c) => c.getbit("b", 7),
  bitcount: (c) => [c.bitcount("b"), c.bitcount("b", { start: 0, end: 10, mode: "BIT" })],
  bitpos: (c) => c.bitpos("b", 1, { start: 2 }),
  bitop: (c) => [c.bitop("AND", "d", "a", "b"), c.bitop("NOT", "d", "a")],
  bitfield: (c) =>
    c.bitfield("b", [
      { op: "GET", type: "u8", offset: 0 },
      { op: "OVERFLOW", behavior: "SAT" },
      { op: "INCRBY", type: "i5", offset: "#1", increment: 3 },
    ]),
  pfadd: (c) => c.pfadd("p", "a", "b"),
  pfcount: (c) => c.pfcount("p", "q"),
  pfmerge: (c) => c.pfmerge("d", "p", "q"),
  geoadd: (c) => c.geoadd("g", { longitude: 13.4, latitude: 52.5, member: "m" }, { ch: true }),
  geodist: (c) => [c.geodist("g", "a", "b"), c.geodist("g", "a", "b", "km")],
  geohash: (c) => c.geohash("g", "a", "b"),
  geopos: (c) => c.geopos("g", "a"),
  geosearch: (c) => [c.geosearch("g", geoFrom), c.geosearch("g", geoBox)],
  geosearchWith: (c) => c.geosearchWith("g", geoFrom, { withDist: true, withCoord: true }),
  geosearchstore: (c) => [
    c.geosearchstore("d", "g", geoFrom),
    c.geosearchstore("d", "g", { ...geoBox, storeDist: true }),
  ],
  eval: (c) => [c.eval("return 1"), c.eval("return 1", ["a", "b"], ["x"])],
  evalsha: (c) => c.evalsha("0".repeat(40), ["a"], ["x", "y"]),
  evalRo: (c) => c.evalRo("return 1", ["a"]),
  evalshaRo: (c) => c.evalshaRo("0".repeat(40), ["a", "b"]),
  evalScript: (c) => c.evalScript("return 1", ["a"], ["x"]),
  scriptLoad: (c) => c.scriptLoad("return 1"),
  scriptExists: (c) => c.scriptExists("0".repeat(40)),
  scriptFlush: (c) => c.scriptFlush({ async: true }),
  fcall: (c) => [c.fcall("fn"), c.fcall("fn", ["a", "b"], ["x"])],
  fcallRo: (c) => c.fcallRo("fn", ["a"]),
  functionLoad: (c) => c.functionLoad("#!lua name=lib\n", { replace: true }),
  functionDelete: (c) => c.functionDelete("lib"),
  functionFlush: (c) => c.functionFlush(),
  functionList: (c) => c.functionList({ libraryName: "lib", withCode: true }),
  ping: (c) => [c.ping(), c.ping("hi")],
  echo: (c) => c.echo("hi"),
  info: (c) => [c.info(), c.info("server", "clients")],
  dbsize: (c) => c.dbsize(),
  flushdb: (c) => c.flushdb(),
  flushall: (c) => c.flushall({ async: true }),
  time: (c) => c.time(),
  lastsave: (c) => c.lastsave(),
  clientId: (c) => c.clientId(),
  clientSetName: (c) => c.clientSetName("n"),
  clientGetName: (c) => c.clientGetName(),
  clientList: (c) => c.clientList(),
  clientInfo: (c) => c.clientInfo(),
  clientKill: (c) => c.clientKill({ id: 7, skipme: true }),
  configGet: (c) => c.configGet("maxmemory", "save"),
  configSet: (c) => c.configSet({ "maxmemory-policy": "noeviction" }),
  configResetStat: (c) => c.configResetStat(),
  wait: (c) => c.wait(1, 100),
  waitaof: (c) => c.waitaof(1, 0, 100),
  publish: (c) => c.publish("ch", "m"),
  spublish: (c) => c.spublish("ch", "m"),
  pubsubChannels: (c) => [c.pubsubChannels(), c.pubsubChannels("a*")],
  pubsubNumsub: (c) => c.pubsubNumsub("a", "b"),
  pubsubNumpat: (c) => c.pubsubNumpat(),
  memoryUsage: (c) => [c.memoryUsage("k"), c.memoryUsage("k", { samples: 5 })],
  swapdb: (c) => c.swapdb(0, 1),
};

/** Raw commands: subcommands, keynum and keyword specs, the server's own key finders. */
const RAW: RedisArgument[][] = [
  ["GET", "k"],
  ["get", "k"],
  [enc("GeT"), enc("k")],
  ["GET"],
  ["GET", "a", "b"],
  ["PING"],
  ["MSET", "a", "1", "b", "2"],
  ["MSET", "a", "1", "b"],
  ["BLPOP", "a", "b", "0"],
  ["WATCH", "a", "b"],
  ["SET", "k", "v", "GET"],
  ["BITFIELD", "k", "GET", "u8", "0"],
  ["BITFIELD_RO", "k", "GET", "u8", "0"],
  ["SPUBLISH", "ch", "m"],
  ["SSUBSCRIBE", "a", "b"],
  ["CLIENT", "KILL", "ID", "7"],
  ["client", "list"],
  ["OBJECT", "ENCODING", "k"],
  ["object", "freq", "k"],
  ["OBJECT", "HELP"],
  [enc("OBJECT"), enc("idletime"), enc("k")],
  ["MEMORY", "USAGE", "k"],
  ["MEMORY", "USAGE", "k", "SAMPLES", "5"],
  ["MEMORY", "DOCTOR"],
  ["XINFO", "STREAM", "k"],
  ["xInfo", "Stream", "k", "FULL", "COUNT", "1"],
  ["XINFO", "GROUPS", "k"],
  ["XINFO", "CONSUMERS", "k", "g"],
  ["XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"],
  ["CONFIG", "GET", "maxmemory"],
  ["SCRIPT", "FLUSH"],
  ["COMMAND", "INFO", "get"],
  ["CLUSTER", "KEYSLOT", "k"],
  ["EVAL", "s", "0"],
  ["EVAL", "s", "2", "a", "b", "c"],
  ["EVAL", "s", "02", "a", "b"],
  ["EVAL", "s", " 1", "a"],
  ["EVAL", "s", "1x", "a"],
  ["EVAL", "s", "x", "a"],
  ["EVAL", "s", "3", "a"],
  ["EVAL", "s", "-1", "a"],
  ["EVALSHA", "0123", "1", "a"],
  ["EVAL_RO", "s", "1", "a", "b"],
  ["EVALSHA_RO", "x", "2", "a", "b"],
  ["FCALL", "f", "2", "a", "b", "x"],
  ["FCALL", "f", "0"],
  ["FCALL_RO", "f", "1", "a"],
  ["XREAD", "STREAMS", "a", "0"],
  ["XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "a", "b", "0", "0"],
  ["XREAD", "STREAMS", "a", "b", "c"],
  ["xread", "streams", "STREAMS", "STREAMS", "0", "0"],
  ["XREAD", "COUNT", "1", "a", "b"],
  ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">"],
  ["XREADGROUP", "GROUP", "STREAMS", "c", "COUNT", "1", "NOACK", "STREAMS", "a", "b", ">", ">"],
  ["XREADGROUP", "GROUP", "g", "STREAMS", "STREAMS", "k", ">"],
  ["MIGRATE", "h", "1", "k", "0", "10"],
  ["MIGRATE", "h", "1", "k", "0", "10", "COPY", "REPLACE"],
  ["MIGRATE", "h", "1", "", "0", "10", "KEYS", "a", "b"],
  ["MIGRATE", "h", "1", "", "0", "10", "COPY", "REPLACE", "AUTH", "pw", "KEYS", "a"],
  ["MIGRATE", "h", "1", "", "0", "10", "AUTH2", "u", "KEYS", "KEYS", "a"],
  ["MIGRATE", "h", "1", "", "0", "10", "KEYS", "KEYS", "b"],
  ["MIGRATE", "h", "1", "k", "0", "10", "KEYS", "a"],
  ["SORT", "k"],
  ["SORT", "k", "STORE", "d"],
  ["sort", "k", "store", "d"],
  ["SORT", "k", "BY", "w", "GET", "#", "LIMIT", "0", "1", "STORE", "d", "STORE", "e"],
  ["SORT", "k", "LIMIT", "STORE", "1", "STORE", "d"],
  ["SORT", "k", "GET", "STORE"],
  ["SORT", "k", "STORE"],
  ["SORT_RO", "k", "BY", "w"],
  ["GEORADIUS", "k", "0", "0", "1", "km"],
  ["GEORADIUS", "k", "0", "0", "1", "km", "STORE", "d"],
  ["GEORADIUS", "k", "0", "0", "1", "km", "STOREDIST", "d"],
  ["GEORADIUS", "k", "0", "0", "1", "km", "STORE", "d1", "STOREDIST", "d2"],
  ["GEORADIUS", "k", "0", "0", "1", "km", "STOREDIST", "d2", "STORE", "d1"],
  ["GEORADIUS", "k", "0", "0", "1", "km", "STORE"],
  ["GEORADIUSBYMEMBER", "k", "m", "1", "km", "STORE", "d"],
  ["GEORADIUS_RO", "k", "0", "0", "1", "km"],
  ["GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"],
  ["ZUNIONSTORE", "d", "2", "a", "b"],
  ["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"],
  ["ZUNIONSTORE", "d", "02", "a", "b"],
  ["ZUNIONSTORE", "d", "0", "a"],
  ["ZUNIONSTORE", "d", "3", "a", "b"],
  ["ZINTERSTORE", "d", "1", "a"],
  ["ZDIFFSTORE", "d", "2", "a", "b"],
  ["ZUNION", "2", "a", "b"],
  ["ZINTER", "1", "a", "WITHSCORES"],
  ["ZDIFF", "2", "a", "b"],
  ["LMPOP", "2", "a", "b", "LEFT"],
  ["LMPOP", "1", "a", "RIGHT", "COUNT", "2"],
  ["LMPOP", "3", "a", "b", "LEFT"],
  ["LMPOP", "02", "a", "b", "LEFT"],
  ["BLMPOP", "0", "2", "a", "b", "LEFT"],
  ["BLMPOP", "1.5", "1", "a", "RIGHT", "COUNT", "3"],
  ["ZMPOP", "1", "a", "MIN"],
  ["BZMPOP", "0", "2", "a", "b", "MAX"],
  ["ZINTERCARD", "2", "a", "b"],
  ["ZINTERCARD", "1", "a", "LIMIT", "5"],
  ["ZINTERCARD", "0", "a"],
  ["SINTERCARD", "2", "a", "b", "LIMIT", "1"],
  ["RENAME", "a", "b"],
  ["COPY", "a", "b", "DB", "1"],
  ["LCS", "a", "b"],
  ["SMOVE", "a", "b", "m"],
  ["PFCOUNT", "a", "b"],
  ["XADD", "k", "*", "f", "v"],
  ["RESTORE", "k", "0", "x"],
  ["WAIT", "0", "0"],
  ["TOUCH", "a"],
];

function show(k: RedisArgument): string {
  return k instanceof Uint8Array ? dec.decode(k) : String(k);
}

describe("commandKeys against COMMAND GETKEYS", () => {
  beforeEach(markLeakBaseline);
  let server: RedisServer;
  let client: RedisClient;
  before(async () => {
    server = await startRedis();
    client = new RedisClient({ url: server.url });
  });
  after(async () => {
    await client.close();
    await server.stop();
    await assertNoLeaks();
  });

  /**
   * The server's keys for `args`: [] where COMMAND GETKEYS refuses (keyless, bad arguments),
   * `undefined` for a command this server does not have.
   */
  async function serverKeys(args: RedisArgument[]): Promise<string[] | undefined> {
    try {
      const r = await client.sendCommand(["COMMAND", "GETKEYS", ...args]);
      assert.ok(Array.isArray(r));
      return r.map((k) => show(k as string));
    } catch (e) {
      if (!(e instanceof ReplyError)) throw e;
      return /Invalid command specified/.test(e.message) ? undefined : [];
    }
  }

  /** Compares every list; returns how many have keys and how many the server does not know. */
  async function compare(list: RedisArgument[][]): Promise<{ withKeys: number; unknown: number }> {
    const expected = await Promise.all(list.map(serverKeys));
    let withKeys = 0;
    let unknown = 0;
    for (let i = 0; i < list.length; i++) {
      const args = list[i] as RedisArgument[];
      const line = args.map(show).join(" ");
      const ours = commandKeys(args);
      if (expected[i] === undefined) {
        // a command of a newer server than the table's (WAITAOF is Redis 7.2)
        assert.equal(ours, undefined, `${line}: the server does not know it`);
        unknown++;
        continue;
      }
      assert.ok(ours !== undefined, `${line}: not in the table`);
      assert.deepEqual(ours.map(show), expected[i], line);
      if (ours.length > 0) withKeys++;
    }
    return { withKeys, unknown };
  }

  it("every typed command method", async () => {
    const methods = Object.getOwnPropertyNames(RedisCommands.prototype)
      .filter((n) => n !== "constructor" && !n.startsWith("_")).sort();
    assert.deepEqual(Object.keys(METHOD_CALLS).sort(), methods, "a call for every method");
    const sent: RedisArgument[][] = [];
    for (const name of methods) {
      const r = new ArgsRecorder();
      await Promise.all([(METHOD_CALLS[name] as Call)(r)].flat());
      assert.ok(r.sent.length > 0, `${name} sent nothing`);
      sent.push(...r.sent);
    }
    const { withKeys, unknown } = await compare(sent);
    assert.ok(methods.length >= 200, `${methods.length} methods`);
    assert.ok(withKeys >= 200, `only ${withKeys} of ${sent.length} commands have keys`);
    assert.ok(unknown <= 1, `${unknown} commands unknown to the server`);
  });

  it("a corpus of raw commands", async () => {
    const { withKeys, unknown } = await compare(RAW);
    assert.equal(unknown, 0);
    assert.ok(withKeys >= 80, `only ${withKeys} of ${RAW.length} commands have keys`);
  });

  it("random argument lists for every command of the table", async () => {
    // Words the key specs and the server's key finders react to, counts strict and loose.
    const words = ["k", "a", "b", "0", "1", "2", "3", "02", "-1", " 1", "1x", "", "x", "LEFT"]
      .concat(["STORE", "store", "STOREDIST", "KEYS", "STREAMS", "LIMIT", "BY", "GET", "COUNT"])
      .concat(["BLOCK", "GROUP", "NOACK", "AUTH", "AUTH2", "COPY", "REPLACE", "WEIGHTS"]);
    let seed = 20261201;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return Math.floor((seed / 0x80000000) * n);
    };
    const lists: RedisArgument[][] = [];
    for (const row of COMMAND_ROWS) {
      const name = (row.split(" ")[0] as string).split("|");
      for (let t = 0; t < 12; t++) {
        const args: RedisArgument[] = [...name];
        for (let i = next(12); i > 0; i--) args.push(words[next(words.length)] as string);
        lists.push(args);
      }
    }
    const { withKeys } = await compare(lists);
    assert.ok(withKeys >= 500, `only ${withKeys} of ${lists.length} lists have keys`);
  });

  for (const protocol of [3, 2] as const) {
    it(`the table matches the server's COMMAND INFO (RESP${protocol})`, async (t) => {
      const c = new RedisClient({ url: server.url, protocol });
      try {
        const info = String(await c.sendCommand(["INFO", "server"]));
        const version = /redis_version:([^\r\n]+)/.exec(info)?.[1];
        if (`redis-server ${version}` !== KEY_SPEC_SERVER) {
          t.skip(`the table is from ${KEY_SPEC_SERVER}, the server is ${version}`);
          return;
        }
        const reply = await c.sendCommand(["COMMAND", "INFO"]) as RespValue[];
        const groups = new Map(COMMAND_ROWS.map((r) => [r.split(" ")[0], r.split(" ")[5]]));
        const rows: string[] = [];
        const add = (i: CommandInfo) => {
          const g = groups.get(i.name);
          rows.push(formatCommandRow({ ...i, group: g === "-" ? undefined : g }));
          i.subcommands.forEach(add);
        };
        for (const e of reply) add(parseCommandInfo(e) as CommandInfo);
        assert.deepEqual(rows.sort(), [...COMMAND_ROWS]);
      } finally {
        await c.close();
      }
    });
  }
});
