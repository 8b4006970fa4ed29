/** Small helpers shared by the client's tests. */
import { type ClientOptions, createClient } from "../src/index.js"

/** Runs `f` with a Promise client of `baseUrl` with tiny retry delays, and closes it. */
export const withPromiseClient = async <A>(
  baseUrl: string,
  options: Omit<ClientOptions, "baseUrl">,
  f: (client: ReturnType<typeof createClient>) => Promise<A>
) => {
  const client = createClient({ baseUrl, retryDelay: 1, ...options })
  try {
    return await f(client)
  } finally {
    await client.close()
  }
}

/** What `promise` rejects with; fails the test when it resolves. */
export const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected the promise to reject")
}

/** An email nobody has signed up with yet. */
export const uniqueEmail = (name: string) => `${name}.${Math.random().toString(36).slice(2, 10)}@example.com`

export const password = "correct horse battery"

/** An invitation's token as its answer shows it; the test servers have no mail settings, so none is mailed. */
export const shown = (inviteToken: string | null): string => {
  if (inviteToken === null) throw new Error("the invitation was mailed: its answer shows no token")
  return inviteToken
}
