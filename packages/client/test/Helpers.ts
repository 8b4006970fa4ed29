/** Small helpers shared by the client's tests. */

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
