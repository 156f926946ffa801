/**
 * PutTracker follows the puts under way in this saver, per thread, so that
 * writes sent ahead of their checkpoint's put wait for it (see putWrites).
 */
export class PutTracker {
  readonly #running = new Map<string, number>();
  readonly #waiters = new Map<string, Array<{ cp: string; wake: () => void }>>();

  /** begin counts a put of thread; call the result with "ns \0 id" of the stored checkpoint, or undefined. */
  begin(thread: string): (stored: string | undefined) => void {
    this.#running.set(thread, (this.#running.get(thread) ?? 0) + 1);
    return (stored) => {
      const left = this.#running.get(thread)! - 1;
      if (left === 0) this.#running.delete(thread);
      else this.#running.set(thread, left);
      const ws = this.#waiters.get(thread) ?? [];
      for (const w of ws.filter((w) => w.cp === stored)) w.wake();
      // A put chained after this one starts in a later microtask: decide "idle" a macrotask later.
      if (left === 0) setImmediate(() => this.#wakeIfIdle(thread));
    };
  }

  /** settled resolves when checkpoint cp of thread is stored by this saver, or no put of thread is under way. */
  settled(thread: string, cp: string): Promise<void> {
    return new Promise((resolve) => {
      const list = this.#waiters.get(thread) ?? [];
      const w = {
        cp,
        wake: () => {
          const rest = (this.#waiters.get(thread) ?? []).filter((x) => x !== w);
          if (rest.length > 0) this.#waiters.set(thread, rest);
          else this.#waiters.delete(thread);
          resolve();
        },
      };
      list.push(w);
      this.#waiters.set(thread, list);
      if (!this.#running.has(thread)) setImmediate(() => this.#wakeIfIdle(thread));
    });
  }

  #wakeIfIdle(thread: string): void {
    if (this.#running.has(thread)) return;
    for (const w of [...(this.#waiters.get(thread) ?? [])]) w.wake();
  }
}
