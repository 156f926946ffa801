// The one way the saver talks to Redis: raw commands whose bulk strings come
// back as Buffers (values are binary), on a node-redis v5 client or cluster.
import { RESP_TYPES } from "redis";
import type { Script } from "./scripts.js";
import { scripted, sending } from "./telemetry.js";

export type Arg = string | Buffer;
export type Reply = null | number | Buffer | string | Reply[];

// The node-redis v5 surfaces used: a client from createClient or a cluster
// from createCluster (told apart by the cluster's "masters").
interface ClientLike {
  sendCommand(args: Arg[], options?: unknown): Promise<unknown>;
  multi(): { addCommand(args: Arg[]): unknown; exec(): Promise<unknown[]> };
}
interface ClusterLike {
  masters: unknown[];
  sendCommand(firstKey: Arg | undefined, isReadonly: boolean | undefined, args: Arg[], options?: unknown): Promise<unknown>;
  multi(routing?: Arg): { addCommand(firstKey: Arg | undefined, isReadonly: boolean | undefined, args: Arg[]): unknown; exec(): Promise<unknown[]> };
}

/** A node-redis v5 client (createClient) or cluster (createCluster), connected. */
export type RedisConnection = object;

const typeMapping = { [RESP_TYPES.BLOB_STRING]: Buffer, [RESP_TYPES.SIMPLE_STRING]: Buffer };

export class Conn {
  readonly cluster: boolean;
  readonly #client: ClientLike | ClusterLike;

  constructor(client: RedisConnection) {
    const c = client as Partial<ClusterLike & ClientLike>;
    if (!c || typeof c.sendCommand !== "function") throw new TypeError("redcheck: not a node-redis v5 client or cluster");
    this.cluster = Array.isArray(c.masters);
    this.#client = client as ClientLike | ClusterLike;
  }

  /** send sends one command, routed (on a cluster) by firstKey. */
  send(firstKey: Arg | undefined, args: Arg[]): Promise<Reply> {
    const done = sending([args], argsFrom);
    if (done === undefined) return this.#send(firstKey, args);
    return this.#send(firstKey, args).then(
      (reply) => {
        done(reply);
        return reply;
      },
      (e: unknown) => {
        done();
        throw e;
      },
    );
  }

  #send(firstKey: Arg | undefined, args: Arg[]): Promise<Reply> {
    if (this.cluster) {
      return (this.#client as ClusterLike).sendCommand(firstKey, false, args, { typeMapping }) as Promise<Reply>;
    }
    return (this.#client as ClientLike).sendCommand(args, { typeMapping }) as Promise<Reply>;
  }

  /** transaction runs commands on one key in MULTI/EXEC (on a cluster, at key's node). */
  async transaction(key: string, cmds: Arg[][]): Promise<Reply[]> {
    const done = sending(cmds, argsFrom);
    let reply: Reply[] | undefined;
    try {
      reply = await this.#transaction(key, cmds);
      return reply;
    } finally {
      done?.(reply);
    }
  }

  async #transaction(key: string, cmds: Arg[][]): Promise<Reply[]> {
    if (this.cluster) {
      const m = (this.#client as ClusterLike).multi(key);
      for (const c of cmds) m.addCommand(key, false, c);
      return (await m.exec()) as Reply[];
    }
    const m = (this.#client as ClientLike).multi();
    for (const c of cmds) m.addCommand(c);
    return (await m.exec()) as Reply[];
  }

  /**
   * run runs a script: EVALSHA, and EVAL when Redis does not have it cached
   * (NOSCRIPT is answered before the script runs, so nothing is sent twice
   * that may have run).
   */
  async run(script: Script, keys: Arg[], args: Arg[]): Promise<Reply> {
    scripted();
    try {
      return await this.#run(script, keys, args);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith("DATALOSS") && this.onDataLoss) throw await this.onDataLoss(e);
      throw e;
    }
  }

  /**
   * onDataLoss, when set, answers for a script's DATALOSS error the error to
   * throw (RedcheckSaver: a prefix found emptied is created again).
   */
  onDataLoss?: (err: Error) => Promise<Error>;

  async #run(script: Script, keys: Arg[], args: Arg[]): Promise<Reply> {
    const tail = [String(keys.length), ...keys, ...args];
    const first = keys[0];
    try {
      return await this.send(first, ["EVALSHA", script.sha, ...tail]);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith("NOSCRIPT")) throw e;
    }
    return this.send(first, ["EVAL", script.source, ...tail]);
  }
}

/** argsFrom is where a command's counted arguments start: past EVALSHA's hash (EVAL's source) and key count, past any other's name. */
function argsFrom(cmd: readonly Arg[]): number {
  return cmd[0] === "EVALSHA" || cmd[0] === "EVAL" ? 3 : 1;
}

export function str(r: Reply | undefined): string {
  if (r === null || r === undefined) return "";
  if (Buffer.isBuffer(r)) return r.toString("utf8");
  return String(r);
}

export function buf(r: Reply | undefined): Buffer {
  if (Buffer.isBuffer(r)) return r;
  if (r === null || r === undefined) return Buffer.alloc(0);
  return Buffer.from(String(r), "utf8");
}

export function arr(r: Reply | undefined): Reply[] {
  return Array.isArray(r) ? r : [];
}

export function num(r: Reply | undefined): number {
  return typeof r === "number" ? r : Number(str(r));
}
