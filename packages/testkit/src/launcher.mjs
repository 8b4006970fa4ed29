// The child process of testkit's Launcher.ts: runs the commands it is sent (`execFile`) and sends back how each
// ended. A test worker holds a gigabyte or more, and each process it starts itself costs a fork of all that (about
// 30 ms of CPU and 60 ms of blocked event loop a `git` at 1 GB, 2 ms from a process this small).
import { execFile } from "node:child_process"

// Outputs of up to 512 MiB (a recursive tree listing of a large test repository).
const maxBuffer = 512 * 1024 * 1024

process.on("message", ({ id, file, args, cwd, env, input }) => {
  const child = execFile(file, args, { cwd, env, maxBuffer, encoding: "buffer" }, (error, stdout, stderr) => {
    const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
    const failure = error === null ? undefined : error.message
    process.send?.({ id, code, failure, stdout, stderr })
  })
  if (input !== undefined) child.stdin?.end(input)
})
// The worker that started it is gone: so is it.
process.on("disconnect", () => process.exit(0))
