/**
 * Node's arguments for the processes tests start that open the embedded database and live for a few requests (a
 * server, a durable runner, a host app): `--liftoff-only` compiles PGlite's WebAssembly once, with V8's baseline
 * compiler, and never again with its optimizing one, which such a process pays for and hardly uses
 * (`orgplane serve --data memory` to ready: 3.3 CPU-s with it, 4.2 without, in about the same 2.5 s; the CLI's
 * Binary, DatabaseMove, Keys and Recovery files: 116.5 -> 89.0 CPU-s). The program is the same: only how V8 compiles
 * it differs. A server that runs for days wants the optimized code, so `orgplane` itself sets no flag.
 */
export const v8Flags: ReadonlyArray<string> = ["--liftoff-only"]
