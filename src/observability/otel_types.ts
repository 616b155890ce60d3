/**
 * The parts of OpenTelemetry's metrics API (`@opentelemetry/api`) the client uses, declared
 * structurally: any `MeterProvider` of the OpenTelemetry SDK (or anything shaped like one)
 * fits, and the client depends on no package.
 *
 * @module
 */

/** Attributes of a measurement. */
export type MetricAttributes = Record<string, string | number | boolean | undefined>;

/** Options of an instrument. */
export interface InstrumentOptions {
  /** What it measures. */
  description?: string;
  /** The unit (UCUM), e.g. `s`, `{connection}`. */
  unit?: string;
  /** Hints for the SDK: a histogram's bucket boundaries. */
  advice?: { explicitBucketBoundaries?: number[] };
}

/**
 * A counter or up-down counter.
 *
 * @example
 * ```ts ignore
 * counter.add(1, { "db.system.name": "redis" });
 * ```
 */
export interface OtelCounter {
  /** Adds `value` (negative only for up-down counters). */
  add(value: number, attributes?: MetricAttributes): void;
}

/**
 * A histogram.
 *
 * @example
 * ```ts ignore
 * histogram.record(0.0012, { "db.operation.name": "GET" });
 * ```
 */
export interface OtelHistogram {
  /** Records one value. */
  record(value: number, attributes?: MetricAttributes): void;
}

/** What an observable instrument's callback reports to. */
export interface OtelObservableResult {
  /** Reports the current value for `attributes`. */
  observe(value: number, attributes?: MetricAttributes): void;
}

/** The callback of an observable instrument. */
export type OtelObservableCallback = (result: OtelObservableResult) => void;

/**
 * An observable (asynchronous) instrument: gauge, counter or up-down counter.
 *
 * @example
 * ```ts ignore
 * gauge.addCallback((result) => result.observe(3, { "db.client.connection.state": "idle" }));
 * ```
 */
export interface OtelObservable {
  /** Adds a callback run at each collection. */
  addCallback(callback: OtelObservableCallback): void;
  /** Removes a callback. */
  removeCallback(callback: OtelObservableCallback): void;
}

/**
 * A meter: makes instruments.
 *
 * @example
 * ```ts ignore
 * const meter = meterProvider.getMeter("edge-redis", "0.1.0");
 * ```
 */
export interface OtelMeter {
  /** A monotonic counter. */
  createCounter(name: string, options?: InstrumentOptions): OtelCounter;
  /** A counter that goes up and down. */
  createUpDownCounter(name: string, options?: InstrumentOptions): OtelCounter;
  /** A histogram. */
  createHistogram(name: string, options?: InstrumentOptions): OtelHistogram;
  /** A gauge read at collection. */
  createObservableGauge(name: string, options?: InstrumentOptions): OtelObservable;
  /** A monotonic counter read at collection. */
  createObservableCounter(name: string, options?: InstrumentOptions): OtelObservable;
  /** An up-down counter read at collection. */
  createObservableUpDownCounter(name: string, options?: InstrumentOptions): OtelObservable;
}

/**
 * A meter provider, as `@opentelemetry/api`'s `MeterProvider` (the SDK's `MeterProvider`
 * fits).
 *
 * @example
 * ```ts ignore
 * import { MeterProvider } from "@opentelemetry/sdk-metrics";
 * const meterProvider: OtelMeterProvider = new MeterProvider({ readers: [reader] });
 * ```
 */
export interface OtelMeterProvider {
  /** The meter of an instrumentation scope. */
  getMeter(name: string, version?: string, options?: { schemaUrl?: string }): OtelMeter;
}

/** Attributes and the status of a span, as `@opentelemetry/api` declares them. */
export interface OtelSpanStatus {
  /** 0 unset, 1 ok, 2 error. */
  code: number;
  /** What went wrong. */
  message?: string;
}

/**
 * A span.
 *
 * @example
 * ```ts ignore
 * span.setAttribute("error.type", "WRONGTYPE");
 * span.end();
 * ```
 */
export interface OtelSpan {
  /** Sets one attribute. */
  setAttribute(key: string, value: string | number | boolean): unknown;
  /** Sets the status. */
  setStatus(status: OtelSpanStatus): unknown;
  /** Adds a timestamped event. */
  addEvent(name: string, attributes?: MetricAttributes): unknown;
  /** Ends the span now. */
  end(): void;
}

/** Options of a new span. */
export interface OtelSpanOptions {
  /** 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
  kind?: number;
  /** Its first attributes. */
  attributes?: MetricAttributes;
}

/**
 * A tracer: starts spans (children of the active span, as the SDK decides).
 *
 * @example
 * ```ts ignore
 * const span = tracer.startSpan("GET", { kind: 2 });
 * ```
 */
export interface OtelTracer {
  /** Starts a span. */
  startSpan(name: string, options?: OtelSpanOptions): OtelSpan;
}

/**
 * A tracer provider, as `@opentelemetry/api`'s `TracerProvider` (the SDK's fits).
 *
 * @example
 * ```ts ignore
 * import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
 * const tracerProvider: OtelTracerProvider = new BasicTracerProvider();
 * ```
 */
export interface OtelTracerProvider {
  /** The tracer of an instrumentation scope. */
  getTracer(name: string, version?: string): OtelTracer;
}
