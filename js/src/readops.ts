// ReadOps: what the list and delta-history walks (list.ts, delta.ts) use of
// a RedcheckSaver, as extended.ts's Ops is for its whole-thread operations.
import type { CheckpointTuple, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { Address } from "./address.js";
import type { Arg, Conn, Reply } from "./conn.js";
import type { Encryption } from "./encryption.js";
import type { Layout } from "./keys.js";
import type { StoredWrite } from "./stored.js";

export interface ReadOps {
  conn: Conn;
  layout: Layout;
  serde: SerializerProtocol;
  /** Encryption at rest: what opens the values read. */
  enc: Encryption;
  /** Checkpoints per list.lua call. */
  pageSize: number;
  /** The lease to renew on a read, in milliseconds (0: none). */
  refreshMs(): number;
  /** The get_tuple.lua call that reads checkpoint a. */
  getTupleCall(a: Address, whole: boolean): { keys: Arg[]; args: Arg[] };
  decodeTuple(thread: string, ns: string, id: string, flat: Reply, values: Reply, extra: Reply): Promise<CheckpointTuple>;
  /** decodeWrite decodes the pending write of field, stored against checkpoint id of the thread and namespace. */
  decodeWrite(thread: string, ns: string, id: string, field: Buffer, stored: Buffer): Promise<StoredWrite>;
}
