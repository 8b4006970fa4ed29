/**
 * Waiting for a signal a test cannot await (a fake received a request, a process printed a line): checked every few
 * milliseconds until it holds. The limit only turns a signal that never comes into a clear failure; no test asserts
 * how long anything took.
 */
export const until = async (condition: () => boolean | Promise<boolean>, what: string, limitMs = 20_000): Promise<void> => {
  const deadline = Date.now() + limitMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
