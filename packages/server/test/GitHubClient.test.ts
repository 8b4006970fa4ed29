/**
 * The GitHub client against FakeGitHub (testkit, no Effect: a real GitHub-like REST API on 127.0.0.1 serving real git
 * repositories, app JWTs verified for real), through the outbound guard over node:http, and webhook signatures: the
 * client, the webhooks and `undecodable` (the outbound client's own tests are in OutboundGuard.test.ts; the code
 * host's settings in CodeHostConfig.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { afterAll, beforeAll } from "vitest"
import * as FakeGitHub from "../../../packages/testkit/src/FakeGitHub.js"
import * as GitRepo from "../../../packages/testkit/src/GitRepo.js"
import * as CodeHostConfig from "../src/integrations/codehost/CodeHostConfig.js"
import { Credential, GitHub, layer as gitHubLayer, tokenRefreshMarginMs, undecodable } from "../src/integrations/codehost/GitHub.js"
import { verifySignature } from "../src/integrations/codehost/Webhooks.js"
import * as Outbound from "../src/platform/Outbound.js"

const INSTALLATION = 7001
const installation = Credential.installation(INSTALLATION)

let docs: GitRepo.GitRepo
let big: GitRepo.GitRepo
let fake: FakeGitHub.FakeGitHub
const cleanup: Array<() => Promise<void>> = []

const readme = "# Handbook\n\nÜnïcödé stays intact: ✓\n"

beforeAll(async () => {
  docs = await GitRepo.withFiles({
    "README.md": readme,
    "docs/guide.md": "guide v1\n",
    "docs/old-name.md": "this file is renamed later, and long enough for git to see the rename as one\n".repeat(3),
    "docs/deep/nested/file.md": "deep\n",
    "large.bin": "x".repeat(1_500_000)
  })
  await docs.branch("feature/x")
  big = await GitRepo.withFiles({ ...GitRepo.manyFiles(1000, { perFolder: 100 }), "top.md": "top\n" })
  // The API under a path, as on GitHub Enterprise Server; the truncation limit low enough for a 1,000-file repository.
  fake = await FakeGitHub.start({ treeLimit: 150, basePath: "/api/v3" })
  fake.addRepository("acme/docs", docs)
  fake.addRepository("acme/big", big)
  fake.addInstallation(INSTALLATION, ["acme/docs", "acme/big"])
  fake.addToken("github_pat_docs_only", ["acme/docs"])
  cleanup.push(() => fake.close(), () => docs.remove(), () => big.remove())
}, 60_000)

afterAll(async () => {
  for (const step of cleanup.reverse()) await step()
})


/** The real clock moved forward by `advance` (as support/Clocks.ts's `ShiftedClock`). */
const shiftedClock = () => {
  const real = Clock.Clock.defaultValue()
  let offsetMillis = 0
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe() + offsetMillis,
    currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe() + offsetMillis),
    currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe() + BigInt(offsetMillis) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe() + BigInt(offsetMillis) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (duration) => real.sleep(duration)
  }
  return { clock, advance: (duration: Duration.Input) => void (offsetMillis += Duration.toMillis(Duration.fromInputUnsafe(duration))) }
}

const appConfig = (gitHub: FakeGitHub.FakeGitHub, overrides: CodeHostConfig.Options = {}) =>
  CodeHostConfig.layer({ codehostApiUrl: gitHub.url, codehostAppId: gitHub.appId, codehostPrivateKey: gitHub.privateKeyPem, ...overrides })

/** The client as the server builds it: config, the guard over node:http, the service. */
const client = (
  gitHub: FakeGitHub.FakeGitHub,
  options: { readonly config?: Layer.Layer<CodeHostConfig.CodeHostConfig, unknown>; readonly outbound?: Partial<Outbound.Settings> } = {}
) => gitHubLayer.pipe(Layer.provide(options.config ?? appConfig(gitHub)), Layer.provide(Outbound.layer(options.outbound)))

const tokenRequests = (gitHub: FakeGitHub.FakeGitHub) => gitHub.requests.filter((request) => request.path.endsWith("/access_tokens")).length

/** The repository's own listing: every blob and tree with its size, as `git ls-tree -r -t -l` gives it. */
const gitTree = async (repo: GitRepo.GitRepo, rev: string) =>
  (await repo.git("ls-tree", "-r", "-t", "-l", "-z", rev)).split("\0").filter((line) => line !== "").map((line) => {
    const [meta, path] = line.split("\t")
    const [, type, sha, size] = meta.split(/ +/)
    return { path, type, sha, size: size === "-" ? null : Number(size) }
  }).sort((a, b) => a.path < b.path ? -1 : 1)

const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

describe("GitHub client", () => {
  it.effect("reads a branch's head (a branch with a slash too) under an Enterprise-style base path", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const head = yield* gitHub.head(installation, "acme/docs", "main")
      expect(head.sha).toBe(yield* Effect.promise(() => docs.head("main")))
      expect(head.treeSha).toBe((yield* Effect.promise(() => docs.git("rev-parse", "main^{tree}"))).trim())
      const feature = yield* gitHub.head(installation, "acme/docs", "feature/x")
      expect(feature.sha).toBe(yield* Effect.promise(() => docs.head("feature/x")))
      // A sha is a ref too.
      expect((yield* gitHub.head(installation, "acme/docs", head.sha)).treeSha).toBe(head.treeSha)
      const missing = yield* failure(gitHub.head(installation, "acme/docs", "no-such-branch"))
      expect(missing).toMatchObject({ _tag: "CodeHostError", status: 422, transient: false })
    }).pipe(Effect.provide(client(fake))))

  it.effect("lists a whole tree in one request when GitHub does not truncate it", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const head = yield* gitHub.head(installation, "acme/docs", "main")
      const before = fake.requests.length
      const tree = yield* gitHub.tree(installation, "acme/docs", head.treeSha)
      expect(fake.requests.length - before).toBe(1)
      expect(tree.truncated).toBe(false)
      expect(tree.walkedSubtrees).toBe(0)
      expect(tree.entries).toEqual(yield* Effect.promise(() => gitTree(docs, "main")))
      expect(tree.entries.find((entry) => entry.path === "docs/deep/nested/file.md")).toMatchObject({ type: "blob", size: 5 })
    }).pipe(Effect.provide(client(fake))))

  it.effect("walks the sub-trees of a truncated listing and misses nothing", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const head = yield* gitHub.head(installation, "acme/big", "main")
      const before = fake.requests.length
      const tree = yield* gitHub.tree(installation, "acme/big", head.treeSha)
      const expected = yield* Effect.promise(() => gitTree(big, "main"))
      // 1,000 files in 10 folders of 100 under dir-0, plus the folders and top.md: far over the limit of 150.
      expect(expected.length).toBe(1012)
      expect(tree.truncated).toBe(true)
      expect(tree.entries).toEqual(expected)
      expect(tree.walkedSubtrees).toBeGreaterThan(0)
      const listings = fake.requests.slice(before).filter((request) => request.path.includes("/git/trees/"))
      expect(listings.length).toBe(tree.walkedSubtrees + 1)
      // The root and dir-0 are too large whole, so they are listed folder by folder; each dir-0/dir-N fits whole.
      expect(listings.filter((request) => !request.path.includes("recursive")).length).toBe(2)
    }).pipe(Effect.provide(client(fake))))

  /** A fake of its own serving acme/big, with these options, and a token seeing it. */
  const bigFake = (options: FakeGitHub.Options) =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        const gitHubFake = await FakeGitHub.start(options)
        gitHubFake.addRepository("acme/big", big)
        gitHubFake.addToken("github_pat_big", ["acme/big"])
        return gitHubFake
      }),
      (gitHubFake) => Effect.promise(() => gitHubFake.close())
    )
  const bigToken = Credential.token("github_pat_big")
  const listings = (gitHubFake: FakeGitHub.FakeGitHub) => gitHubFake.requests.filter((request) => request.path.includes("/git/trees/"))

  it.effect("completes a recursive listing GitHub cut by its size rather than its entry count", () =>
    Effect.gen(function*() {
      const treeBytesLimit = 32 * 1024
      const bySize = yield* bigFake({ treeBytesLimit })
      const treeSha = (yield* Effect.promise(() => big.git("rev-parse", "main^{tree}"))).trim()
      // The fake cuts as GitHub does: as many entries as fit in the byte limit, far fewer than the entry limit.
      const raw = yield* Effect.promise(async () => {
        const response = await fetch(`${bySize.url}/repos/acme/big/git/trees/${treeSha}?recursive=1`, { headers: { authorization: "Bearer github_pat_big" } })
        return await response.json() as { truncated: boolean; tree: Array<unknown> }
      })
      expect(raw.truncated).toBe(true)
      expect(raw.tree.length).toBeGreaterThan(50)
      expect(raw.tree.length).toBeLessThan(1012)
      const listedBytes = Buffer.byteLength(JSON.stringify(raw.tree))
      expect(listedBytes).toBeLessThanOrEqual(treeBytesLimit)
      expect(listedBytes).toBeGreaterThan(treeBytesLimit - 500)
      const tree = yield* Effect.flatMap(GitHub, (gitHub) => gitHub.tree(bigToken, "acme/big", treeSha)).pipe(Effect.provide(client(bySize)))
      expect(tree.truncated).toBe(true)
      expect(tree.entries).toEqual(yield* Effect.promise(() => gitTree(big, "main")))
      // The root and dir-0 are cut; each dir-0/dir-N (100 files) fits whole.
      expect(listings(bySize).length).toBe(tree.walkedSubtrees + 2)
      expect(listings(bySize).filter((request) => !request.path.includes("recursive")).length).toBe(2)
    }).pipe(Effect.scoped))

  it.effect("walks the folders when a recursive listing is larger than Outbound reads", () =>
    Effect.gen(function*() {
      // No truncation at all: the recursive listing of 1,012 entries (about 190 KB) comes whole, over the 64 KB cap.
      const uncut = yield* bigFake({})
      const treeSha = (yield* Effect.promise(() => big.git("rev-parse", "main^{tree}"))).trim()
      const tree = yield* Effect.flatMap(GitHub, (gitHub) => gitHub.tree(bigToken, "acme/big", treeSha)).pipe(
        Effect.provide(client(uncut, { outbound: { maxBodyBytes: 64 * 1024 } }))
      )
      expect(tree.truncated).toBe(true)
      expect(tree.entries).toEqual(yield* Effect.promise(() => gitTree(big, "main")))
      // The root and dir-0 whole are too large, so they are listed by themselves; each dir-0/dir-N fits whole.
      const listed = listings(uncut)
      expect(listed.length).toBe(tree.walkedSubtrees + 1)
      expect(listed.filter((request) => !request.path.includes("recursive")).length).toBe(2)
      expect(listed.filter((request) => request.path.includes("recursive")).length).toBe(12)
    }).pipe(Effect.scoped))

  it.effect("a single folder whose own listing is larger than Outbound reads fails clearly, not as transient", () =>
    Effect.gen(function*() {
      const uncut = yield* bigFake({})
      const treeSha = (yield* Effect.promise(() => big.git("rev-parse", "main^{tree}"))).trim()
      // Each dir-0/dir-N holds 100 files: about 18 KB listed by itself, over the 8 KB cap.
      const error = yield* Effect.flatMap(GitHub, (gitHub) => failure(gitHub.tree(bigToken, "acme/big", treeSha))).pipe(
        Effect.provide(client(uncut, { outbound: { maxBodyBytes: 8 * 1024 } }))
      )
      expect(error).toMatchObject({ _tag: "CodeHostError", status: null, transient: false })
      expect(error.message).toMatch(/^the folder "dir-0\/dir-\d" of acme\/big has too many entries to list/)
      expect(error.message).not.toContain("github_pat")
    }).pipe(Effect.scoped))

  it.effect("reads blobs and file contents as text, at a ref, and null where there is no file", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const head = yield* gitHub.head(installation, "acme/docs", "main")
      const tree = yield* gitHub.tree(installation, "acme/docs", head.treeSha)
      const readmeSha = tree.entries.find((entry) => entry.path === "README.md")!.sha
      expect(yield* gitHub.blob(installation, "acme/docs", readmeSha)).toBe(readme)
      expect(Buffer.from(yield* gitHub.blobBytes(installation, "acme/docs", readmeSha)).toString("utf8")).toBe(readme)
      expect(yield* gitHub.contents(installation, "acme/docs", "docs/guide.md", "main")).toBe("guide v1\n")
      expect(yield* gitHub.contents(installation, "acme/docs", "README.md", head.sha)).toBe(readme)
      expect(yield* gitHub.contents(installation, "acme/docs", "docs/missing.md", "main")).toBeNull()
      expect(yield* gitHub.contents(installation, "acme/docs", "docs", "main")).toBeNull()
      // Over 1 MB the contents API leaves the content out; the client fetches the blob.
      expect(yield* gitHub.contents(installation, "acme/docs", "large.bin", "main")).toBe("x".repeat(1_500_000))
      const missingBlob = yield* failure(gitHub.blob(installation, "acme/docs", "0".repeat(40)))
      expect(missingBlob).toMatchObject({ status: 404, transient: false })
    }).pipe(Effect.provide(client(fake))))

  it.effect("compares two commits after a push that adds, changes, renames and deletes", () =>
    Effect.gen(function*() {
      const repo = yield* Effect.promise(() => GitRepo.withFiles({ "keep.md": "keep\n", "change.md": "v1\n", "gone.md": "bye\n", "move.md": "moving along, with enough text to be recognised as a rename\n" }))
      const gitHubFake = yield* Effect.promise(() => FakeGitHub.start())
      yield* Effect.addFinalizer(() => Effect.promise(async () => { await gitHubFake.close(); await repo.remove() }))
      gitHubFake.addRepository("acme/changes", repo)
      gitHubFake.addInstallation(1, ["acme/changes"])
      const base = yield* Effect.promise(() => repo.head())
      const after = yield* Effect.promise(() =>
        repo.commitFiles({ "change.md": "v2\n", "gone.md": null, "new.md": "new\n", "move.md": null, "moved/here.md": "moving along, with enough text to be recognised as a rename\n" })
      )
      yield* Effect.gen(function*() {
        const gitHub = yield* GitHub
        const credential = Credential.installation(1)
        const comparison = yield* gitHub.compare(credential, "acme/changes", base, "main")
        expect(comparison).toMatchObject({ status: "ahead", aheadBy: 1, behindBy: 0, complete: true })
        const blobAt = (rev: string, path: string) => Effect.promise(async () => (await repo.git("rev-parse", `${rev}:${path}`)).trim())
        expect([...comparison.files].sort((a, b) => a.filename < b.filename ? -1 : 1)).toEqual([
          { filename: "change.md", status: "modified", sha: yield* blobAt(after, "change.md"), previousFilename: null },
          { filename: "gone.md", status: "removed", sha: yield* blobAt(base, "gone.md"), previousFilename: null },
          { filename: "moved/here.md", status: "renamed", sha: yield* blobAt(after, "moved/here.md"), previousFilename: "move.md" },
          { filename: "new.md", status: "added", sha: yield* blobAt(after, "new.md"), previousFilename: null }
        ])
        expect(yield* gitHub.compare(credential, "acme/changes", "main", base)).toMatchObject({ status: "behind", aheadBy: 0, behindBy: 1, files: [] })
        // GitHub lists at most 300 files and says nothing of the rest: the client says the list may be incomplete.
        const many = yield* Effect.promise(() => repo.commitFiles(GitRepo.manyFiles(301, { prefix: "bulk/" })))
        const bulk = yield* gitHub.compare(credential, "acme/changes", after, many)
        expect(bulk.files.length).toBe(300)
        expect(bulk.complete).toBe(false)
        expect(yield* gitHub.compare(credential, "acme/changes", many, many)).toMatchObject({ status: "identical", files: [] })
      }).pipe(Effect.provide(client(gitHubFake)))
    }).pipe(Effect.scoped))

  it.effect("gets one installation token for many calls, concurrent ones included", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const before = tokenRequests(fake)
      yield* Effect.forEach(Array.from({ length: 10 }), () => gitHub.head(installation, "acme/docs", "main"), { concurrency: 10 })
      yield* Effect.forEach(Array.from({ length: 10 }), () => gitHub.head(installation, "acme/docs", "main"))
      expect(tokenRequests(fake) - before).toBe(1)
    }).pipe(Effect.provide(client(fake))))

  it.live("asks for a new token shortly before the current one expires, as GitHub's expires_at says", () => {
    // The client's clock, moved past the token's life instead of waiting it out.
    const { clock, advance } = shiftedClock()
    return Effect.gen(function*() {
      const repo = yield* Effect.promise(() => GitRepo.withFiles({ "a.md": "a" }))
      // A token that lives 10 minutes past the refresh margin: reused until then, replaced after.
      const shortLived = yield* Effect.promise(() => FakeGitHub.start({ tokenLifetimeMs: tokenRefreshMarginMs + 600_000 }))
      yield* Effect.addFinalizer(() => Effect.promise(async () => { await shortLived.close(); await repo.remove() }))
      shortLived.addRepository("acme/a", repo)
      shortLived.addInstallation(3, ["acme/a"])
      yield* Effect.gen(function*() {
        const gitHub = yield* GitHub
        yield* gitHub.head(Credential.installation(3), "acme/a", "main")
        yield* gitHub.head(Credential.installation(3), "acme/a", "main")
        expect(shortLived.tokensIssued()).toBe(1)
        advance("9 minutes")
        yield* gitHub.head(Credential.installation(3), "acme/a", "main")
        expect(shortLived.tokensIssued()).toBe(1)
        advance("2 minutes")
        yield* gitHub.head(Credential.installation(3), "acme/a", "main")
        expect(shortLived.tokensIssued()).toBe(2)
      }).pipe(Effect.provide(client(shortLived)))
    }).pipe(Effect.scoped, Effect.provideService(Clock.Clock, clock))
  })

  it.effect("drops a token GitHub refuses, so the next attempt gets a new one", () =>
    Effect.gen(function*() {
      const repo = yield* Effect.promise(() => GitRepo.withFiles({ "a.md": "a" }))
      const gitHubFake = yield* Effect.promise(() => FakeGitHub.start())
      yield* Effect.addFinalizer(() => Effect.promise(async () => { await gitHubFake.close(); await repo.remove() }))
      gitHubFake.addRepository("acme/a", repo)
      gitHubFake.addInstallation(4, ["acme/a"])
      yield* Effect.gen(function*() {
        const gitHub = yield* GitHub
        yield* gitHub.head(Credential.installation(4), "acme/a", "main")
        // Uninstalled: its tokens answer 401, and a new token cannot be had (404).
        gitHubFake.removeInstallation(4)
        expect(yield* failure(gitHub.head(Credential.installation(4), "acme/a", "main"))).toMatchObject({ status: 401, transient: false })
        expect(yield* failure(gitHub.head(Credential.installation(4), "acme/a", "main"))).toMatchObject({ status: 404, transient: false })
        gitHubFake.addInstallation(4, ["acme/a"])
        yield* gitHub.head(Credential.installation(4), "acme/a", "main")
        expect(gitHubFake.tokensIssued()).toBe(2)
      }).pipe(Effect.provide(client(gitHubFake)))
    }).pipe(Effect.scoped))

  it.effect("a key that is not the app's is refused by GitHub: a 401 that no retry fixes", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const error = yield* failure(gitHub.head(installation, "acme/docs", "main"))
      expect(error).toMatchObject({ _tag: "CodeHostError", status: 401, transient: false })
      expect(error.message).toContain("access_tokens")
    }).pipe(Effect.provide(client(fake, {
      config: appConfig(fake, {
        codehostPrivateKey: NodeCrypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString()
      })
    }))))

  it.effect("429 and 5xx are transient, with GitHub's retry-after; a repository the token cannot see is a plain 404", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      yield* gitHub.head(installation, "acme/docs", "main")
      fake.failNext(1, 429, { retryAfter: 7 })
      expect(yield* failure(gitHub.head(installation, "acme/docs", "main"))).toMatchObject({ status: 429, transient: true, retryAfterSeconds: 7 })
      fake.failNext(1, 502)
      expect(yield* failure(gitHub.head(installation, "acme/docs", "main"))).toMatchObject({ status: 502, transient: true })
      // GitHub also answers an exhausted rate limit with 403; its headers tell it from a refusal.
      fake.failNext(1, 403, { retryAfter: 30 })
      expect(yield* failure(gitHub.head(installation, "acme/docs", "main"))).toMatchObject({ status: 403, transient: true, retryAfterSeconds: 30 })
      expect(yield* failure(gitHub.head(installation, "acme/nope", "main"))).toMatchObject({ status: 404, transient: false })
      expect(yield* gitHub.head(installation, "acme/docs", "main")).toMatchObject({ sha: expect.any(String) })
    }).pipe(Effect.provide(client(fake))))

  it.live("a failing token exchange is classified like any other request", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      fake.failNext(1, 502)
      expect(yield* failure(gitHub.head(installation, "acme/docs", "main"))).toMatchObject({ status: 502, transient: true })
      fake.hangNext(1)
      const hung = yield* failure(gitHub.head(installation, "acme/docs", "main"))
      expect(hung).toMatchObject({ status: null, transient: true })
      expect(hung.message).toContain("timeout")
      expect(yield* gitHub.head(installation, "acme/docs", "main")).toMatchObject({ sha: expect.any(String) })
    }).pipe(Effect.provide(client(fake, { outbound: { timeout: "400 millis" } }))))

  it.live("a request GitHub never answers times out: transient, naming the origin only", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const token = Credential.token("github_pat_docs_only")
      fake.hangNext(1)
      const error = yield* failure(gitHub.head(token, "acme/docs", "main"))
      expect(error).toMatchObject({ _tag: "CodeHostError", status: null, transient: true })
      expect(error.message).toContain(`timeout at ${new URL(fake.url).origin}`)
      expect(error.message).not.toContain("github_pat")
    }).pipe(Effect.provide(client(fake, { outbound: { timeout: "400 millis" } }))))

  it.effect("refuses an answer larger than the cap, without retrying", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const head = yield* gitHub.head(installation, "acme/docs", "main")
      const tree = yield* gitHub.tree(installation, "acme/docs", head.treeSha)
      const large = tree.entries.find((entry) => entry.path === "large.bin")!
      const error = yield* failure(gitHub.blob(installation, "acme/docs", large.sha))
      expect(error).toMatchObject({ _tag: "CodeHostError", status: null, transient: false })
      expect(error.message).toContain("too_large")
      expect(yield* gitHub.blob(installation, "acme/docs", tree.entries.find((entry) => entry.path === "README.md")!.sha)).toBe(readme)
    }).pipe(Effect.provide(client(fake, { outbound: { maxBodyBytes: 256 * 1024 } }))))

  it.effect("token accounts read what their token sees, with no app and no token exchange", () =>
    Effect.gen(function*() {
      const gitHub = yield* GitHub
      const before = tokenRequests(fake)
      const token = Credential.token("github_pat_docs_only")
      expect(yield* gitHub.contents(token, "acme/docs", "docs/guide.md", "main")).toBe("guide v1\n")
      expect(yield* failure(gitHub.head(token, "acme/big", "main"))).toMatchObject({ status: 404, transient: false })
      expect(yield* failure(gitHub.head(Credential.token("github_pat_wrong"), "acme/docs", "main"))).toMatchObject({ status: 401, transient: false })
      expect(tokenRequests(fake)).toBe(before)
      // Without an app, installations cannot be used at all.
      expect(yield* failure(gitHub.head(installation, "acme/docs", "main"))).toMatchObject({ _tag: "CodeHostNotConfigured" })
    }).pipe(Effect.provide(client(fake, { config: CodeHostConfig.layer({ codehostApiUrl: fake.url }) }))))

  it.effect("follows a renamed repository's redirect (same origin)", () =>
    Effect.gen(function*() {
      const repo = yield* Effect.promise(() => GitRepo.withFiles({ "a.md": "a" }))
      const gitHubFake = yield* Effect.promise(() => FakeGitHub.start())
      yield* Effect.addFinalizer(() => Effect.promise(async () => { await gitHubFake.close(); await repo.remove() }))
      gitHubFake.addRepository("acme/old", repo)
      gitHubFake.addInstallation(5, ["acme/old"])
      gitHubFake.renameRepository("acme/old", "acme/new")
      const head = yield* Effect.flatMap(GitHub, (gitHub) => gitHub.head(Credential.installation(5), "acme/old", "main")).pipe(Effect.provide(client(gitHubFake)))
      expect(head.sha).toBe(yield* Effect.promise(() => repo.head()))
      expect(gitHubFake.requests.map((request) => request.status)).toContain(301)
    }).pipe(Effect.scoped))
})

/** A loopback server answering every request with `handler`. */
const serve = (handler: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = Http.createServer(handler)
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}` }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }))
  )

describe("Webhooks.verifySignature", () => {
  it.live("accepts GitHub's signature of the raw body and nothing else", () =>
    Effect.gen(function*() {
      const received: Array<{ body: string; signature: string | undefined; event: string | undefined }> = []
      const receiver = yield* serve((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          received.push({
            body: Buffer.concat(chunks).toString("utf8"),
            signature: request.headers["x-hub-signature-256"] as string | undefined,
            event: request.headers["x-github-event"] as string | undefined
          })
          response.writeHead(202).end()
        })
      })
      const payload = FakeGitHub.pushPayload({
        fullName: "acme/docs",
        ref: "refs/heads/main",
        before: "a".repeat(40),
        after: "b".repeat(40),
        installationId: INSTALLATION,
        repositoryId: fake.repositoryId("acme/docs")
      })
      const delivered = yield* Effect.promise(() => fake.deliver("push", payload, { url: receiver.url }))
      expect(delivered.status).toBe(202)
      const [push] = received
      expect(push.event).toBe("push")
      expect(yield* verifySignature(Redacted.make(fake.webhookSecret), push.body, push.signature)).toBe(true)
      expect(yield* verifySignature(fake.webhookSecret, push.body, push.signature)).toBe(true)
      expect(yield* verifySignature("another secret", push.body, push.signature)).toBe(false)
      expect(yield* verifySignature(fake.webhookSecret, push.body.replace("refs/heads/main", "refs/heads/evil"), push.signature)).toBe(false)
      expect(yield* verifySignature(fake.webhookSecret, push.body, undefined)).toBe(false)
      expect(yield* verifySignature(fake.webhookSecret, push.body, "sha1=abc")).toBe(false)
      expect(yield* verifySignature(fake.webhookSecret, "", push.signature)).toBe(false)
      yield* Effect.promise(() => fake.deliver("push", payload, { url: receiver.url, signature: `sha256=${"0".repeat(64)}` }))
      expect(yield* verifySignature(fake.webhookSecret, received[1].body, received[1].signature)).toBe(false)
      // The payload helpers carry what a receiver reads.
      expect(FakeGitHub.repositoriesRemovedPayload({ installationId: 1, appId: 2, account: "acme", removed: [{ fullName: "acme/docs", id: 9 }] }))
        .toMatchObject({ action: "removed", installation: { id: 1 }, repositories_removed: [{ id: 9, full_name: "acme/docs" }] })
      expect(FakeGitHub.repositoryRenamedPayload({ installationId: 1, repositoryId: 9, from: "acme/old", to: "acme/new" }))
        .toMatchObject({ action: "renamed", changes: { repository: { name: { from: "old" } } }, repository: { id: 9, full_name: "acme/new" } })
      expect(FakeGitHub.installationDeletedPayload({ installationId: 1, appId: 2, account: "acme", repositories: [] }))
        .toMatchObject({ action: "deleted", installation: { id: 1, app_id: 2, account: { login: "acme" } } })
    }).pipe(Effect.scoped))
})

describe("an answer the client cannot decode", () => {
  it("names the tree entry and the field instead of refusing the whole tree", () => {
    const Tree = Schema.Struct({
      tree: Schema.Array(Schema.Struct({ path: Schema.String, type: Schema.Literals(["blob", "tree", "commit"]), sha: Schema.String }))
    })
    const json = { tree: [{ path: "a.md", type: "blob", sha: "1" }, { path: "skills/odd", type: "symlink", sha: "2" }] }
    const error = Result.getOrThrow(Result.flip(Schema.decodeUnknownResult(Tree, { reportInput: true })(json)))
    // Decoded as the client decodes (`reportInput`), in Effect 4's words.
    expect(undecodable(json, error)).toBe('entry `skills/odd`, field `tree[1].type`: Expected "blob" | "tree" | "commit", got "symlink"')
    const missing = Result.getOrThrow(Result.flip(Schema.decodeUnknownResult(Tree, { reportInput: true })({})))
    expect(undecodable({}, missing)).toBe("field `tree`: Missing key")
  })
})
