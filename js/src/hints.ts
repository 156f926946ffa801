// HintCache holds what a saver remembers of the threads it used last: hints
// that the scripts check, never answers (Go: redissaver/cache.go). put
// stages values into the generation it remembers; put.lua answers the live
// one when it is stale.

/** MAX_HINTS bounds a cache (Go: maxHints): past it, the oldest entry goes. */
export const MAX_HINTS = 4096;

/** HintCache is a map of at most MAX_HINTS entries. */
export class HintCache<V> {
  readonly #m = new Map<string, V>();

  get(key: string): V | undefined {
    return this.#m.get(key);
  }

  set(key: string, v: V): void {
    this.#m.delete(key);
    if (this.#m.size >= MAX_HINTS) this.#m.delete(this.#m.keys().next().value!);
    this.#m.set(key, v);
  }

  forget(key: string): void {
    this.#m.delete(key);
  }
}
