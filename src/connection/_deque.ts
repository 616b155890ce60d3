// A FIFO queue on a growable ring buffer: O(1) push, shift and peek, no per-item allocation.
export class Deque<T> {
  #items: (T | undefined)[];
  #head = 0;
  #size = 0;
  #mask: number;

  constructor(capacity = 64) {
    let cap = 16;
    while (cap < capacity) cap <<= 1;
    this.#items = new Array(cap);
    this.#mask = cap - 1;
  }

  get length(): number {
    return this.#size;
  }

  push(item: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#size) & this.#mask] = item;
    this.#size++;
  }

  /** Inserts at the front (next to be shifted). */
  unshift(item: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#head = (this.#head - 1) & this.#mask;
    this.#items[this.#head] = item;
    this.#size++;
  }

  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    this.#size--;
    return item;
  }

  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#items[this.#head];
  }

  /** The i-th item from the front, 0-based. */
  at(i: number): T | undefined {
    return i < this.#size ? this.#items[(this.#head + i) & this.#mask] : undefined;
  }

  /** Removes and returns every item, front first. */
  drain(): T[] {
    const out: T[] = new Array(this.#size);
    for (let i = 0; i < out.length; i++) out[i] = this.shift() as T;
    return out;
  }

  #grow(): void {
    const old = this.#items;
    const next: (T | undefined)[] = new Array(old.length * 2);
    for (let i = 0; i < this.#size; i++) next[i] = old[(this.#head + i) & this.#mask];
    this.#items = next;
    this.#head = 0;
    this.#mask = next.length - 1;
  }
}
