/**
 * Commands run in a small child process of this one (`launcher.mjs`), started once and reused: a process a test
 * worker starts itself costs a fork of the worker's whole memory, synchronously (`git --version` from a process of
 * 1 GB: 30 ms of CPU and 62 ms of wall time, the event loop blocked throughout; from the launcher: 2 ms and 4 ms).
 * Test repositories (GitRepo.ts) and the code host's fake (FakeGitHub.ts) run git through it, thousands of times a
 * run. The launcher does not keep the process alive and ends with it.
 */
import { type ChildProcess, spawn } from "node:child_process"

export interface Options {
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  /** Written to the command's standard input, which is then closed. */
  readonly input?: string | Uint8Array
}

export interface Outcome {
  /** The exit code; null when the command did not start or was killed. */
  readonly code: number | null
  /** Why it failed (Node's words: not found, exit code, killed), or undefined when it exited 0. */
  readonly failure: string | undefined
  readonly stdout: Buffer
  readonly stderr: Buffer
}

interface Reply {
  readonly id: number
  readonly code: number | null
  readonly failure: string | undefined
  readonly stdout: Uint8Array
  readonly stderr: Uint8Array
}

const isReply = (message: unknown): message is Reply =>
  typeof message === "object" && message !== null && "id" in message && typeof message.id === "number"

let launcher: ChildProcess | undefined
let next = 0
const waiting = new Map<number, { readonly resolve: (outcome: Outcome) => void; readonly reject: (error: Error) => void }>()

const started = (): ChildProcess => {
  if (launcher !== undefined) return launcher
  const child = spawn(process.execPath, [new URL("./launcher.mjs", import.meta.url).pathname], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    serialization: "advanced",
    env: {}
  })
  const gone = (error: Error) => {
    if (launcher === child) launcher = undefined
    for (const [id, waiter] of waiting) {
      waiting.delete(id)
      waiter.reject(error)
    }
  }
  child.on("message", (message: unknown) => {
    if (!isReply(message)) return
    const waiter = waiting.get(message.id)
    waiting.delete(message.id)
    waiter?.resolve({
      code: message.code,
      failure: message.failure,
      stdout: Buffer.from(message.stdout),
      stderr: Buffer.from(message.stderr)
    })
    if (waiting.size === 0) idle(child)
  })
  child.on("error", gone)
  child.on("exit", () => gone(new Error("the launcher exited")))
  launcher = child
  return child
}

/** With nothing in flight, the launcher does not keep this process alive. */
const idle = (child: ChildProcess) => {
  child.unref()
  child.channel?.unref()
}

const busy = (child: ChildProcess) => {
  child.ref()
  child.channel?.ref()
}

/** Runs `file` with `args` in the launcher; how it ended (a failure is an outcome, not a rejection). */
export const execFile = (file: string, args: ReadonlyArray<string>, options: Options): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = started()
    const id = next++
    waiting.set(id, { resolve, reject })
    busy(child)
    child.send({
      id,
      file,
      args,
      cwd: options.cwd,
      env: options.env,
      input: options.input
    })
  })
