/**
 * OpenTelemetry metrics of a client, under the names the Redis clients share (the database
 * client semantic conventions, `db.client.*`, plus `redis.client.*`), recorded through a
 * `MeterProvider` the application passes in (the `metrics` option, a part made by `otelMetrics()`
 * of `@edge/redis/otel`; `tracing` likewise by `otelTracing()`). Off by default; when off,
 * nothing is recorded and nothing allocated per command, and a bundle of `@edge/redis` alone
 * carries none of this module.
 *
 * @module
 */

import type { Endpoint } from "../endpoint.ts";
import { ReplyError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { RedisArgument } from "../resp/types.ts";
import { LIB_NAME, VERSION } from "../version.ts";
import type {
  MetricAttributes,
  OtelCounter,
  OtelHistogram,
  OtelMeter,
  OtelMeterProvider,
  OtelObservable,
  OtelObservableCallback,
  OtelObservableResult,
  OtelSpan,
  OtelTracer,
  OtelTracerProvider,
} from "./otel_types.ts";

import { METRIC_GROUPS, type MetricGroup } from "./metric_groups.ts";

export { METRIC_GROUPS, type MetricGroup };

/**
 * The `metrics` option of every client.
 *
 * @example
 * ```ts ignore
 * import { MeterProvider } from "@opentelemetry/sdk-metrics";
 * const client = new RedisClient({
 *   metrics: { meterProvider: new MeterProvider({ readers: [reader] }), groups: ["command"] },
 * });
 * ```
 */
export interface MetricsOptions {
  /** Where instruments come from: an OpenTelemetry `MeterProvider`. */
  meterProvider: OtelMeterProvider;
  /**
   * The groups to record.
   * @default {["connection-basic", "resiliency"]}
   */
  groups?: MetricGroup[];
  /** Only these commands (case-insensitive) in `db.client.operation.duration`. */
  includeCommands?: string[];
  /** Not these commands (case-insensitive) in `db.client.operation.duration`. */
  excludeCommands?: string[];
  /**
   * Leave `redis.client.pubsub.channel` out of pub/sub measurements (channel names can be many,
   * or private).
   * @default {false}
   */
  hideChannelNames?: boolean;
  /** Bucket boundaries, in seconds, of the duration histograms. */
  buckets?: number[];
}

/**
 * The `tracing` option of every client: a span per command or batch, on the database span
 * conventions; maintenance events, handoffs, topology changes and switches as span events.
 *
 * @example
 * ```ts ignore
 * import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
 * const client = new RedisClient({ tracing: { tracerProvider: new BasicTracerProvider() } });
 * ```
 */
export interface TracingOptions {
  /** Where tracers come from: an OpenTelemetry `TracerProvider`. */
  tracerProvider: OtelTracerProvider;
  /**
   * Put `db.query.text` on spans: the command with every argument replaced by `?` (argument
   * values never leave the client).
   * @default {false}
   */
  queryText?: boolean;
}

/** Which client kind records: the multi-database client leaves commands to its databases. */
export type MetricsKind = "standalone" | "cluster" | "sentinel" | "multi-db";

/** The state a client's parts report at each collection. */
export interface MetricsSource {
  /** Connections by pool (one pool per endpoint). */
  connections?(): ConnectionSample[];
  /** The client-side cache's counters. */
  cache?(): CacheSample | undefined;
}

/** Connections of one pool. */
export interface ConnectionSample {
  /** `host:port`. */
  pool: string;
  /** Open and not serving a command. */
  idle: number;
  /** Serving a command (or borrowed). */
  used: number;
  /** Commands queued or waiting for their reply. */
  pending: number;
}

/** The counters of the client-side cache the metrics read. */
export interface CacheSample {
  hits: number;
  misses: number;
  entries: number;
  evictions: number;
  invalidations: number;
  /** Of `evictions`, by `ttl`. */
  expired: number;
  /** Estimated reply bytes answered from memory. */
  bytesSaved: number;
}

const DEFAULT_GROUPS: MetricGroup[] = ["connection-basic", "resiliency"];
const DEFAULT_BUCKETS = [
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];
const CACHE_CAP = 1024;
const OPEN_SPANS_CAP = 10_000;
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

/** The meter of a client with tracing only: never asked for an instrument. */
const NO_METER = {} as OtelMeter;
const NO_METER_PROVIDER: OtelMeterProvider = { getMeter: () => NO_METER };

// What a command is, for the measurements beyond its duration.
const KIND_PLAIN = 0;
const KIND_PUBLISH = 1;
const KIND_SPUBLISH = 2;
const KIND_STREAM = 3;

interface CommandEntry {
  /** The attributes of a success. */
  attrs: MetricAttributes;
  /** The base attributes they were made from. */
  base: MetricAttributes;
  name: string;
  wanted: boolean;
  kind: number;
  /** Rejection handler of the resiliency-only path (no closure per command). */
  onError: (e: unknown) => never;
}

export type InstrumentKind = "counter" | "updown" | "histogram" | "gauge" | "ocounter" | "oupdown";

/** An instrument: kind, unit, description. */
export interface InstrumentSpec {
  kind: InstrumentKind;
  unit: string;
  description: string;
}

/** Every instrument: kind, unit, description. The README's table is this table. */
const SPECS: Record<string, InstrumentSpec> = {
  "db.client.operation.duration": {
    kind: "histogram",
    unit: "s",
    description: "Duration of database client operations (a command, or a MULTI/PIPELINE batch)",
  },
  "db.client.connection.count": {
    kind: "oupdown",
    unit: "{connection}",
    description: "Connections open, by state (idle, used)",
  },
  "db.client.connection.create_time": {
    kind: "histogram",
    unit: "s",
    description: "Time to open a connection (dial and handshake)",
  },
  "db.client.connection.pending_requests": {
    kind: "oupdown",
    unit: "{request}",
    description: "Commands queued or waiting for their reply",
  },
  "db.client.connection.wait_time": {
    kind: "histogram",
    unit: "s",
    description: "Time waited for an exclusive connection",
  },
  "redis.client.connection.closed": {
    kind: "counter",
    unit: "{connection}",
    description: "Sockets closed, by reason",
  },
  "redis.client.connection.relaxed_timeout": {
    kind: "updown",
    unit: "{relaxation}",
    description: "Connections whose timeouts are relaxed for maintenance",
  },
  "redis.client.connection.handoff": {
    kind: "counter",
    unit: "{handoff}",
    description: "Connections replaced after MOVING",
  },
  "redis.client.maintenance.notifications": {
    kind: "counter",
    unit: "{notification}",
    description: "Maintenance notifications acted on, by type",
  },
  "redis.client.errors": {
    kind: "counter",
    unit: "{error}",
    description: "Errors, by category; internal ones were handled by the client",
  },
  "redis.client.pubsub.messages": {
    kind: "counter",
    unit: "{message}",
    description: "Pub/sub messages sent and received",
  },
  "redis.client.stream.lag": {
    kind: "histogram",
    unit: "s",
    description: "Age of stream entries when read (now minus the entry id's time)",
  },
  "redis.client.csc.requests": {
    kind: "ocounter",
    unit: "{request}",
    description: "Cacheable reads, by result (hit, miss)",
  },
  "redis.client.csc.items": {
    kind: "oupdown",
    unit: "{item}",
    description: "Replies kept in the client-side cache",
  },
  "redis.client.csc.evictions": {
    kind: "ocounter",
    unit: "{eviction}",
    description: "Replies dropped from the client-side cache, by reason",
  },
  "redis.client.csc.network_saved": {
    kind: "ocounter",
    unit: "By",
    description: "Estimated reply bytes answered from memory",
  },
};

/**
 * Adds instruments (a client kind's own, defined in its module so that other kinds' bundles do
 * not carry them).
 */
export function defineInstruments(specs: Record<string, InstrumentSpec>): void {
  Object.assign(SPECS, specs);
}

type Instrument = OtelCounter | OtelHistogram | OtelObservable;

/** Instruments are made once per meter provider, whatever the number of clients. */
const byProvider = new WeakMap<OtelMeterProvider, Map<string, Instrument>>();

function errorCategory(e: unknown): string {
  if (e instanceof ReplyError) {
    const p = e.prefix;
    return p === "NOAUTH" || p === "WRONGPASS" || p === "NOPERM" ? "auth" : "server";
  }
  const name = e instanceof Error ? e.name : "";
  if (name === "ConnectionError" || name === "TimeoutError") {
    return /\b(tls|certificate|ssl)\b/i.test((e as Error).message) ? "tls" : "network";
  }
  return "other";
}

function errorType(e: unknown): string {
  if (e instanceof ReplyError) return e.prefix;
  return e instanceof Error ? e.name : typeof e;
}

function text(v: RedisArgument | undefined): string {
  return typeof v === "string"
    ? v
    : v instanceof Uint8Array
    ? new TextDecoder().decode(v)
    : String(v);
}

function validateNames(what: string, v: unknown): Set<string> | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((n) => typeof n !== "string")) {
    throw new TypeError(`Cannot use metrics.${what}: expected an array of command names`);
  }
  return new Set(v.map((n: string) => n.toUpperCase()));
}

/**
 * Checks the `metrics` option: an object with a `meterProvider` (anything with `getMeter`),
 * known groups, increasing finite buckets, command lists of strings.
 *
 * @param options The option.
 * @returns The same options.
 * @throws {TypeError} When it is none of that.
 */
export function checkMetricsOptions(options: MetricsOptions): MetricsOptions {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError("Cannot use metrics: expected an options object with a meterProvider");
  }
  const p = options.meterProvider;
  if (typeof p !== "object" || p === null || typeof p.getMeter !== "function") {
    throw new TypeError("Cannot use metrics: meterProvider must have a getMeter method");
  }
  const groups = options.groups ?? DEFAULT_GROUPS;
  if (!Array.isArray(groups)) {
    throw new TypeError(
      `Cannot use metrics.groups: expected an array of ${METRIC_GROUPS.join(", ")}`,
    );
  }
  for (const g of groups) {
    if (!(METRIC_GROUPS as readonly unknown[]).includes(g)) {
      throw new TypeError(
        `Cannot use the metric group "${String(g)}": expected one of ${METRIC_GROUPS.join(", ")}`,
      );
    }
  }
  const b = options.buckets;
  if (
    b !== undefined &&
    (!Array.isArray(b) || b.some((x, i) => !Number.isFinite(x) || (i > 0 && x <= b[i - 1]!)))
  ) {
    throw new TypeError("Cannot use metrics.buckets: expected increasing finite numbers");
  }
  validateNames("includeCommands", options.includeCommands);
  validateNames("excludeCommands", options.excludeCommands);
  return options;
}

/**
 * Checks the `tracing` option: an object with a `tracerProvider` (anything with `getTracer`).
 *
 * @param tracing The option.
 * @returns The same options.
 * @throws {TypeError} When it is not.
 */
export function checkTracingOptions(tracing: TracingOptions): TracingOptions {
  const tp = typeof tracing === "object" && tracing !== null ? tracing.tracerProvider : undefined;
  if (typeof tp !== "object" || tp === null || typeof tp.getTracer !== "function") {
    throw new TypeError("Cannot use tracing: tracerProvider must have a getTracer method");
  }
  return tracing;
}

/**
 * The metrics of one client: instruments, attributes, and what its parts call. Made by
 * {@linkcode ClientMetrics.create}; each part checks one field before calling it.
 *
 * @example
 * ```ts ignore
 * const m = ClientMetrics.create({ meterProvider }, console, "standalone");
 * ```
 */
export class ClientMetrics {
  /** Commands go through `command()` (duration, errors, pub/sub out, stream lag). */
  readonly perCommand: boolean;
  /** `command` group. */
  readonly durations: boolean;
  /** `connection-basic` group. */
  readonly basic: boolean;
  /** `connection-advanced` group. */
  readonly advanced: boolean;
  /** `resiliency` group. */
  readonly resiliency: boolean;
  /** `pubsub` group. */
  readonly pubsub: boolean;
  /** `streaming` group. */
  readonly streaming: boolean;
  /** `client-side-caching` group. */
  readonly csc: boolean;
  /** Spans per command (`tracing` option). */
  readonly tracing: boolean;
  readonly #tracer: OtelTracer | undefined;
  readonly #queryText: boolean;
  /** Spans not ended yet: they get the client's events. */
  readonly #open = new Set<OtelSpan>();
  readonly #meter: OtelMeter;
  readonly #instruments: Map<string, Instrument>;
  readonly #logger: Logger;
  readonly #include: Set<string> | undefined;
  readonly #exclude: Set<string> | undefined;
  readonly #hideChannels: boolean;
  readonly #buckets: number[];
  readonly #kind: MetricsKind;
  #base: MetricAttributes;
  #db: number | undefined;
  #commands = new Map<unknown, CommandEntry>();
  readonly #relaxed = new WeakSet<object>();
  readonly #callbacks: [OtelObservable, OtelObservableCallback][] = [];
  #warned = false;
  #closed = false;
  #events: EventTarget | undefined;
  readonly #eventTracer: OtelTracer | undefined;

  private constructor(
    o: MetricsOptions,
    meter: OtelMeter,
    logger: Logger,
    kind: MetricsKind,
    groups: Set<string>,
    tracer: OtelTracer | undefined,
    queryText: boolean,
  ) {
    this.#meter = meter;
    this.#tracer = kind === "multi-db" ? undefined : tracer;
    this.#eventTracer = tracer;
    this.tracing = this.#tracer !== undefined;
    this.#queryText = queryText;
    this.#logger = logger;
    this.#kind = kind;
    let instruments = byProvider.get(o.meterProvider);
    if (instruments === undefined) byProvider.set(o.meterProvider, instruments = new Map());
    this.#instruments = instruments;
    this.#include = validateNames("includeCommands", o.includeCommands);
    this.#exclude = validateNames("excludeCommands", o.excludeCommands);
    this.#hideChannels = o.hideChannelNames === true;
    this.#buckets = o.buckets ?? DEFAULT_BUCKETS;
    const commands = kind !== "multi-db";
    this.durations = commands && groups.has("command");
    this.basic = groups.has("connection-basic");
    this.advanced = groups.has("connection-advanced");
    this.resiliency = groups.has("resiliency");
    this.pubsub = groups.has("pubsub");
    this.streaming = groups.has("streaming");
    this.csc = groups.has("client-side-caching");
    this.perCommand = commands &&
      (this.durations || this.resiliency || this.pubsub || this.streaming || this.tracing);
    this.#base = { "db.system.name": "redis", "redis.client.library": `${LIB_NAME}_v${VERSION}` };
  }

  /**
   * Validates the `metrics` option and makes the recorder.
   *
   * @param options The `metrics` option; `undefined` for none.
   * @param logger Where a failing meter provider is reported (once, at warn).
   * @param kind The client kind.
   * @returns The recorder, or `undefined` when metrics are off (or `getMeter` threw).
   * @throws {TypeError} No `meterProvider`, an unknown group, bad command lists or buckets.
   */
  static create(
    options: MetricsOptions | undefined,
    logger: Logger,
    kind: MetricsKind,
    tracing?: TracingOptions,
  ): ClientMetrics | undefined {
    let tracer: OtelTracer | undefined;
    if (tracing !== undefined) {
      const tp = checkTracingOptions(tracing).tracerProvider;
      try {
        tracer = tp.getTracer(LIB_NAME, VERSION);
      } catch (e) {
        logger.warn(`Tracing is off: the tracer provider failed: ${(e as Error)?.message ?? e}`);
      }
    }
    const queryText = tracing?.queryText === true;
    if (options === undefined) {
      if (tracer === undefined) return undefined;
      return new ClientMetrics(
        { meterProvider: NO_METER_PROVIDER, groups: [] },
        NO_METER,
        logger,
        kind,
        new Set(),
        tracer,
        queryText,
      );
    }
    checkMetricsOptions(options);
    const p = options.meterProvider;
    const groups = options.groups ?? DEFAULT_GROUPS;
    let meter: OtelMeter;
    let on = new Set<string>(groups);
    try {
      meter = p.getMeter(LIB_NAME, VERSION);
    } catch (e) {
      logger.warn(`Metrics are off: the meter provider failed: ${(e as Error)?.message ?? e}`);
      if (tracer === undefined) return undefined;
      meter = NO_METER;
      on = new Set();
    }
    return new ClientMetrics(options, meter, logger, kind, on, tracer, queryText);
  }

  #fail(e: unknown): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#logger.warn(
      `A metrics instrument failed (further failures not logged): ${(e as Error)?.message ?? e}`,
    );
  }

  #get<T extends Instrument>(name: string): T {
    let i = this.#instruments.get(name);
    if (i === undefined) {
      const s = SPECS[name]!;
      const o = { unit: s.unit, description: s.description } as
        & Parameters<
          OtelMeter["createHistogram"]
        >[1]
        & object;
      if (s.kind === "histogram" && s.unit === "s") {
        o.advice = { explicitBucketBoundaries: this.#buckets };
      }
      const m = this.#meter;
      i = s.kind === "counter"
        ? m.createCounter(name, o)
        : s.kind === "updown"
        ? m.createUpDownCounter(name, o)
        : s.kind === "histogram"
        ? m.createHistogram(name, o)
        : s.kind === "gauge"
        ? m.createObservableGauge(name, o)
        : s.kind === "ocounter"
        ? m.createObservableCounter(name, o)
        : m.createObservableUpDownCounter(name, o);
      this.#instruments.set(name, i);
    }
    return i as T;
  }

  #add(name: string, value: number, attrs: MetricAttributes): void {
    if (this.#closed) return;
    try {
      this.#get<OtelCounter>(name).add(value, attrs);
    } catch (e) {
      this.#fail(e);
    }
  }

  #record(name: string, value: number, attrs: MetricAttributes): void {
    if (this.#closed) return;
    try {
      this.#get<OtelHistogram>(name).record(value, attrs);
    } catch (e) {
      this.#fail(e);
    }
  }

  #with(extra: MetricAttributes): MetricAttributes {
    return { ...this.#base, ...extra };
  }

  /**
   * The endpoint the client's commands go to (`server.address`, `server.port`) and its
   * database (`db.namespace`); a cluster client has none.
   */
  setEndpoint(endpoint: Endpoint | undefined, db?: number): void {
    this.#db = db;
    const base: MetricAttributes = {
      "db.system.name": "redis",
      "redis.client.library": `${LIB_NAME}_v${VERSION}`,
    };
    if (endpoint !== undefined) {
      base["server.address"] = endpoint.host;
      base["server.port"] = endpoint.port;
    }
    if (db !== undefined) base["db.namespace"] = String(db);
    this.#base = base;
    this.#commands = new Map();
  }

  /** The clock of durations, in ms. */
  now(): number {
    return performance.now();
  }

  #entry(raw: RedisArgument | undefined): CommandEntry {
    const e = this.#commands.get(raw);
    if (e !== undefined) return e;
    const name = text(raw).toUpperCase();
    const wanted = (this.#include === undefined || this.#include.has(name)) &&
      !(this.#exclude?.has(name) ?? false);
    const kind = name === "PUBLISH"
      ? KIND_PUBLISH
      : name === "SPUBLISH"
      ? KIND_SPUBLISH
      : name === "XREAD" || name === "XREADGROUP"
      ? KIND_STREAM
      : KIND_PLAIN;
    const attrs = this.#with({ "db.operation.name": name });
    const entry: CommandEntry = {
      attrs,
      base: this.#base,
      name,
      wanted,
      kind,
      onError: (err: unknown): never => {
        this.#error(err, entry.name, false);
        throw err;
      },
    };
    if (this.#commands.size < CACHE_CAP) this.#commands.set(raw, entry);
    return entry;
  }

  /** `e`, or its successor when the endpoint changed while the command ran (a sentinel switch). */
  #current(e: CommandEntry, args: RedisArgument[]): CommandEntry {
    return e.base === this.#base ? e : this.#entry(args[0]);
  }

  /**
   * Measures one command: its duration (`command`), its failure (`resiliency`), a message
   * published (`pubsub`), the lag of the entries read (`streaming`).
   *
   * @param args The command.
   * @param start `now()` when it was issued.
   * @param p Its outcome.
   * @param counted Its failure is counted already, by `commandError` (sent with `FLAG_COUNTED`).
   * @returns `p`'s outcome.
   */
  command(
    args: RedisArgument[],
    start: number,
    p: Promise<unknown>,
    counted = false,
  ): Promise<unknown> {
    const e = this.#entry(args[0]);
    const span = this.#tracer === undefined ? undefined : this.#startSpan(e.name, e.attrs, args);
    if (!this.durations && e.kind === KIND_PLAIN && span === undefined) {
      return this.resiliency && !counted ? p.then(undefined, e.onError) : p;
    }
    return p.then((v) => {
      if (span !== undefined) this.#endSpan(span, undefined);
      if (this.durations && e.wanted) {
        this.#record(
          "db.client.operation.duration",
          (performance.now() - start) / 1000,
          this.#current(e, args).attrs,
        );
      }
      if (e.kind !== KIND_PLAIN) this.#extra(e, args, v);
      return v;
    }, (err) => {
      if (span !== undefined) this.#endSpan(span, err);
      if (this.durations && e.wanted) {
        this.#record(
          "db.client.operation.duration",
          (performance.now() - start) / 1000,
          this.#errorAttrs(this.#current(e, args).attrs, err),
        );
      }
      if (this.resiliency && !counted) this.#error(err, e.name, false);
      throw err;
    });
  }

  /**
   * Counts the error a command's caller receives (`resiliency`), told by the connection that
   * rejects it (`FLAG_COUNTED`): no promise reaction per command. Never throws.
   *
   * @param error What the caller receives.
   * @param cmd The command's name (its first argument).
   */
  readonly commandError = (error: Error, cmd: RedisArgument | undefined): void => {
    try {
      this.#error(error, cmd === undefined ? undefined : this.#entry(cmd).name, false);
    } catch (e) {
      this.#fail(e);
    }
  };

  /**
   * Measures a batch (`MULTI`, `PIPELINE`) as one operation.
   *
   * @param name `MULTI` or `PIPELINE`.
   * @param size The number of commands.
   * @param start `now()` when it was issued.
   * @param p Its outcome.
   * @returns `p`'s outcome.
   */
  batch<T>(name: "MULTI" | "PIPELINE", size: number, start: number, p: Promise<T>): Promise<T> {
    if (!this.durations && !this.resiliency && !this.tracing) return p;
    const attrs = this.#with({ "db.operation.name": name, "db.operation.batch.size": size });
    const span = this.#tracer === undefined ? undefined : this.#startSpan(name, attrs, undefined);
    return p.then((v) => {
      if (span !== undefined) this.#endSpan(span, undefined);
      if (this.durations) {
        this.#record("db.client.operation.duration", (performance.now() - start) / 1000, attrs);
      }
      return v;
    }, (err) => {
      if (span !== undefined) this.#endSpan(span, err);
      if (this.durations) {
        this.#record(
          "db.client.operation.duration",
          (performance.now() - start) / 1000,
          this.#errorAttrs(attrs, err),
        );
      }
      if (this.resiliency) this.#error(err, name, false);
      throw err;
    });
  }

  #startSpan(
    name: string,
    attrs: MetricAttributes,
    args: RedisArgument[] | undefined,
  ): OtelSpan | undefined {
    try {
      let a = attrs;
      if (this.#queryText && args !== undefined) {
        a = { ...attrs, "db.query.text": [name, ...args.slice(1).map(() => "?")].join(" ") };
      }
      const span = this.#tracer!.startSpan(name, { kind: SPAN_KIND_CLIENT, attributes: a });
      if (this.#open.size < OPEN_SPANS_CAP) this.#open.add(span);
      return span;
    } catch (e) {
      this.#fail(e);
      return undefined;
    }
  }

  #endSpan(span: OtelSpan, err: unknown): void {
    this.#open.delete(span);
    try {
      if (err !== undefined) {
        span.setAttribute("error.type", errorType(err));
        if (err instanceof ReplyError) span.setAttribute("db.response.status_code", err.prefix);
        span.setStatus({ code: STATUS_ERROR, message: (err as Error)?.message });
      }
      span.end();
    } catch (e) {
      this.#fail(e);
    }
  }

  /** A client event as a span event: on every span open, else on a span of its own. */
  #spanEvent(name: string, attrs: MetricAttributes): void {
    const tracer = this.#eventTracer;
    if (tracer === undefined || this.#closed) return;
    try {
      if (this.#open.size > 0) {
        for (const s of this.#open) s.addEvent(name, attrs);
        return;
      }
      const span = tracer.startSpan(name, { kind: SPAN_KIND_INTERNAL, attributes: this.#base });
      span.addEvent(name, attrs);
      span.end();
    } catch (e) {
      this.#fail(e);
    }
  }

  #errorAttrs(attrs: MetricAttributes, err: unknown): MetricAttributes {
    const a: MetricAttributes = { ...attrs, "error.type": errorType(err) };
    if (err instanceof ReplyError) a["db.response.status_code"] = err.prefix;
    return a;
  }

  #error(
    err: unknown,
    operation: string | undefined,
    internal: boolean,
    extra?: MetricAttributes,
  ): void {
    const a: MetricAttributes = {
      ...this.#base,
      "error.type": errorType(err),
      "redis.client.errors.category": errorCategory(err),
      "redis.client.errors.internal": internal,
      ...extra,
    };
    if (operation !== undefined) a["db.operation.name"] = operation;
    if (err instanceof ReplyError) a["db.response.status_code"] = err.prefix;
    this.#add("redis.client.errors", 1, a);
  }

  #extra(e: CommandEntry, args: RedisArgument[], v: unknown): void {
    if (e.kind === KIND_STREAM) {
      if (this.streaming) this.#streamLag(args, v);
      return;
    }
    if (!this.pubsub) return;
    this.message("out", e.kind === KIND_SPUBLISH, text(args[1]));
  }

  #streamLag(args: RedisArgument[], reply: unknown): void {
    if (reply === null || typeof reply !== "object") return;
    let group: string | undefined;
    if (e_name(args) === "XREADGROUP") group = text(args[2]);
    const now = Date.now();
    // A map (RESP3) or an array of [stream, entries] (RESP2), raw or transformed.
    const streams: [unknown, unknown][] = reply instanceof Map
      ? [...reply]
      : Array.isArray(reply)
      ? reply.filter(Array.isArray) as [unknown, unknown][]
      : Object.entries(reply as Record<string, unknown>);
    for (const [stream, entries] of streams) {
      if (!Array.isArray(entries)) continue;
      const attrs = this.#with({ "redis.client.stream.name": String(stream) });
      if (group !== undefined) attrs["redis.client.stream.consumer_group"] = group;
      for (const entry of entries) {
        const id = Array.isArray(entry) ? entry[0] : (entry as { id?: unknown })?.id;
        const ms = typeof id === "string" ? Number(id.slice(0, id.indexOf("-"))) : NaN;
        if (Number.isFinite(ms)) {
          this.#record("redis.client.stream.lag", Math.max(0, now - ms) / 1000, attrs);
        }
      }
    }
  }

  /** A pub/sub message sent or received (`pubsub`). */
  message(direction: "out" | "in", sharded: boolean, channel: string): void {
    const a = this.#with({
      "redis.client.pubsub.message.direction": direction,
      "redis.client.pubsub.sharded": sharded,
    });
    if (!this.#hideChannels) a["redis.client.pubsub.channel"] = channel;
    this.#add("redis.client.pubsub.messages", 1, a);
  }

  /** A connection of `pool` opened in `ms` (`connection-basic`). */
  connectionCreated(ms: number, pool: string): void {
    this.#record(
      "db.client.connection.create_time",
      ms / 1000,
      this.#with({ "db.client.connection.pool.name": pool }),
    );
  }

  /** A socket of `pool` closed (`connection-advanced`, as node-redis and redis-py group it). */
  connectionClosed(reason: string, pool: string, error?: Error): void {
    const a = this.#with({
      "db.client.connection.pool.name": pool,
      "redis.client.connection.close.reason": reason,
    });
    if (error !== undefined) a["error.type"] = errorType(error);
    this.#add("redis.client.connection.closed", 1, a);
  }

  /** An exclusive connection of `pool` was waited for for `ms` (`connection-advanced`). */
  waited(ms: number, pool: string): void {
    this.#record(
      "db.client.connection.wait_time",
      ms / 1000,
      this.#with({ "db.client.connection.pool.name": pool }),
    );
  }

  /** A connection's timeouts were relaxed (`on`) or restored (`connection-basic`). */
  relaxed(conn: object, on: boolean, pool: string): void {
    if (on === this.#relaxed.has(conn)) return;
    if (on) this.#relaxed.add(conn);
    else this.#relaxed.delete(conn);
    this.#add(
      "redis.client.connection.relaxed_timeout",
      on ? 1 : -1,
      this.#with({ "db.client.connection.pool.name": pool }),
    );
  }

  /** A maintenance notification was acted on (`resiliency`). */
  notification(type: string, pool: string): void {
    this.#add(
      "redis.client.maintenance.notifications",
      1,
      this.#with({
        "redis.client.connection.notification": type,
        "db.client.connection.pool.name": pool,
      }),
    );
  }

  /** An error the client handled itself (`resiliency`). */
  internalError(error: unknown, extra?: MetricAttributes): void {
    this.#error(error, undefined, true, extra);
  }

  /**
   * Listens to a client's events: handoffs, reconnects, background errors, topology changes,
   * switches.
   *
   * @param events The client's event target.
   */
  listen(events: EventTarget): void {
    this.#events = events;
    const on = (name: string, f: (detail: never) => void) => this.on(name, f);
    if (this.#eventTracer !== undefined) {
      const flat = (d: unknown): MetricAttributes => {
        const out: MetricAttributes = {};
        if (typeof d !== "object" || d === null) return out;
        for (const [k, v] of Object.entries(d)) {
          if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
            out[`redis.client.event.${k}`] = v;
          } else if (typeof v === "object" && v !== null && "host" in v && "port" in v) {
            out[`redis.client.event.${k}`] = `${(v as Endpoint).host}:${(v as Endpoint).port}`;
          }
        }
        return out;
      };
      for (const name of ["maintenance", "handoff", "switch", "topology"]) {
        on(name, (d: unknown) => {
          const detail = this.#kind === "multi-db" && name !== "switch"
            ? {
              database: (d as { database?: string }).database,
              ...((d as { detail?: object }).detail ?? {}),
            }
            : d;
          this.#spanEvent(`redis.client.${name}`, flat(detail));
        });
      }
    }
    // A multi-database client's databases measure their own handoffs.
    if (this.basic && this.#kind !== "multi-db") {
      on("handoff", (d: { from?: Endpoint; to?: Endpoint; detail?: unknown }) => {
        const h = (d.detail ?? d) as { from?: Endpoint; to?: Endpoint };
        this.#add(
          "redis.client.connection.handoff",
          1,
          this.#with({
            "db.client.connection.pool.name": h.from ? `${h.from.host}:${h.from.port}` : undefined,
            "redis.client.connection.handoff.target": h.to
              ? `${h.to.host}:${h.to.port}`
              : undefined,
          }),
        );
      });
    }
    if (this.resiliency) {
      on("error", (e: unknown) => this.#error(e, undefined, true));
    }
  }

  /**
   * Calls `f` with the detail of each event `name` of the client (an exception is logged once).
   *
   * @param name The event name.
   * @param f What to do with its detail.
   */
  on<D>(name: string, f: (detail: D) => void): void {
    this.#events?.addEventListener(name, (ev) => {
      try {
        f((ev as CustomEvent).detail as D);
      } catch (e) {
        this.#fail(e);
      }
    });
  }

  /** Adds `value` to the counter `name`, with the client's attributes and `extra`. */
  add(name: string, value: number, extra: MetricAttributes): void {
    this.#add(name, value, this.#with(extra));
  }

  /** Records `ms` (as seconds) in the histogram `name`. */
  record(name: string, ms: number, extra: MetricAttributes): void {
    this.#record(name, ms / 1000, this.#with(extra));
  }

  /** The client's attributes and `extra`. */
  attributes(extra: MetricAttributes): MetricAttributes {
    return this.#with(extra);
  }

  /** The client's database (`db.namespace`). */
  get db(): number | undefined {
    return this.#db;
  }

  /** Reads `f` at each collection of the observed instrument `name`, until `close()`. */
  observe(name: string, f: (r: OtelObservableResult) => void): void {
    this.#observe(name, f);
  }

  #observe(name: string, f: (r: OtelObservableResult) => void): void {
    try {
      const inst = this.#get<OtelObservable>(name);
      const cb: OtelObservableCallback = (r) => {
        try {
          f(r);
        } catch (e) {
          this.#fail(e);
        }
      };
      inst.addCallback(cb);
      this.#callbacks.push([inst, cb]);
    } catch (e) {
      this.#fail(e);
    }
  }

  /**
   * Reads `source` at each collection, until `close()`.
   *
   * @param source What the client's parts report.
   */
  source(source: MetricsSource): void {
    const { connections, cache } = source;
    if (connections !== undefined && (this.basic || this.advanced)) {
      if (this.basic) {
        this.#observe("db.client.connection.count", (r) => {
          for (const s of connections()) {
            const a = this.#with({ "db.client.connection.pool.name": s.pool });
            r.observe(s.idle, { ...a, "db.client.connection.state": "idle" });
            r.observe(s.used, { ...a, "db.client.connection.state": "used" });
          }
        });
      }
      if (this.advanced) {
        this.#observe("db.client.connection.pending_requests", (r) => {
          for (const s of connections()) {
            r.observe(s.pending, this.#with({ "db.client.connection.pool.name": s.pool }));
          }
        });
      }
    }
    if (cache !== undefined && this.csc) {
      this.#observe("redis.client.csc.requests", (r) => {
        const s = cache();
        if (s === undefined) return;
        r.observe(s.hits, this.#with({ "redis.client.csc.result": "hit" }));
        r.observe(s.misses, this.#with({ "redis.client.csc.result": "miss" }));
      });
      this.#observe("redis.client.csc.items", (r) => {
        const s = cache();
        if (s !== undefined) r.observe(s.entries, this.#with({}));
      });
      this.#observe("redis.client.csc.evictions", (r) => {
        const s = cache();
        if (s === undefined) return;
        r.observe(s.evictions - s.expired, this.#with({ "redis.client.csc.reason": "full" }));
        r.observe(s.expired, this.#with({ "redis.client.csc.reason": "ttl" }));
        r.observe(s.invalidations, this.#with({ "redis.client.csc.reason": "invalidation" }));
      });
      this.#observe("redis.client.csc.network_saved", (r) => {
        const s = cache();
        if (s !== undefined) r.observe(s.bytesSaved, this.#with({}));
      });
    }
  }

  /** Stops reading the sources and recording (the client closed). */
  close(): void {
    this.#closed = true;
    for (const [inst, cb] of this.#callbacks.splice(0)) {
      try {
        inst.removeCallback(cb);
      } catch (e) {
        this.#fail(e);
      }
    }
  }
}

function e_name(args: RedisArgument[]): string {
  return text(args[0]).toUpperCase();
}
