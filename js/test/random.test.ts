import { describe, expect, it } from "vitest";
import { newGen, validateGen } from "../src/keys.js";
import { randomBytesFromPool } from "../src/random.js";
import { nextVersion } from "../src/version.js";

describe("random bytes from the pool", () => {
  it("gives distinct valid generations and versions across several refills of the pool", () => {
    const gens = new Set<string>();
    const suffixes = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const g = newGen();
      expect(validateGen(g)).toBeUndefined();
      gens.add(g);
      const v = nextVersion(undefined);
      expect(v).toMatch(/^0{11}1\.[0-9a-f]{8}$/);
      suffixes.add(v.slice(-8));
    }
    expect(gens.size).toBe(2000);
    expect(suffixes.size).toBeGreaterThan(1990); // 32 random bits each: a few collisions at most
  });

  it("hands out copies, never a view of the pool", () => {
    const a = randomBytesFromPool(16);
    const copy = Buffer.from(a);
    for (let i = 0; i < 600; i++) randomBytesFromPool(16); // refills the pool at least twice: a view would have changed
    expect(a.equals(copy)).toBe(true);
  });

  it.each([-1, 1.5, 4097])("refuses %s bytes", (n) => {
    expect(() => randomBytesFromPool(n)).toThrow(RangeError);
  });
});
