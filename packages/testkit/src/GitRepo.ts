/**
 * Real git repositories for tests, built with the `git` binary in a temporary folder: what FakeGitHub serves and
 * what the code-host connector syncs.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Launcher from "./Launcher.js"

/** Files to write: a path (with `/`) and its content, or `null` to delete it. */
/** A symbolic link: git stores its target as the blob, with mode 120000. */
export interface Link {
  readonly link: string
}

/** An executable file (mode 100755), as hook scripts are committed. */
export interface Executable {
  readonly executable: string | Uint8Array
}

/** Files to commit by path: text, bytes, a link, an executable file, or null to delete. */
export type Files = Readonly<Record<string, string | Uint8Array | Link | Executable | null>>

export interface GitRepo {
  /** The bare repository's folder (git commands run here; there is no work tree). */
  readonly dir: string
  /** Files (or, for `null`, deletions: of a file or a whole folder) for the next commit. */
  readonly write: (files: Files) => Promise<void>
  /** Commits what `write` gave on the current branch, even when nothing changed; the new commit's sha. */
  readonly commit: (message: string) => Promise<string>
  /** `write` then `commit`: one step of a test's history. */
  readonly commitFiles: (files: Files, message?: string) => Promise<string>
  /** Creates a branch at the current commit (without switching to it). */
  readonly branch: (name: string) => Promise<void>
  /** Makes `name` the current branch: the next commit goes there. */
  readonly checkout: (name: string) => Promise<void>
  /** The sha a branch (or any revision) points at. */
  readonly head: (branch?: string) => Promise<string>
  /** Runs git in the repository; its standard output. */
  readonly git: (...args: ReadonlyArray<string>) => Promise<string>
  readonly remove: () => Promise<void>
}

/**
 * A fixed identity (commits carry their own fixed dates), and nothing from the machine's or the user's git configuration, so a repository
 * built twice from the same steps has the same shas.
 */
const environment = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: Os.tmpdir(),
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Test Author",
  GIT_AUTHOR_EMAIL: "author@example.test",
  GIT_COMMITTER_NAME: "Test Committer",
  GIT_COMMITTER_EMAIL: "committer@example.test",
  LANG: "C",
  LC_ALL: "C"
})

const gitOptions = ["-c", "init.defaultBranch=main", "-c", "core.autocrlf=false", "-c", "gc.auto=0", "-c", "commit.gpgsign=false"]

/** Runs git in `dir` (through the launcher: Launcher.ts); rejects with its standard error when it fails. */
export const git = async (dir: string, args: ReadonlyArray<string>, input?: string | Uint8Array): Promise<string> => {
  const outcome = await Launcher.execFile("git", [...gitOptions, ...args], { cwd: dir, env: environment(), ...(input === undefined ? {} : { input }) })
  if (outcome.failure !== undefined) throw new Error(`git ${args.join(" ")} failed: ${outcome.stderr.toString("utf8") || outcome.failure}`)
  return outcome.stdout.toString("utf8")
}

/** A fast-import `data` command: its length in bytes, then the bytes. */
const data = (content: string | Uint8Array) => {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content)
  return [Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from("\n")]
}

const checkPath = (path: string) => {
  const parts = path.split("/")
  if (path === "" || /[\n"\\]/.test(path) || parts.some((part) => part === "" || part === "." || part === ".." || part === ".git")) {
    throw new Error(`unsupported path in a test repository: ${JSON.stringify(path)}`)
  }
  return path
}

/**
 * A new bare repository (no work tree: `write` keeps the changes in memory and `commit` writes them with one
 * `git fast-import`, so a commit of 20,000 files takes a fraction of a second) whose `HEAD` is an unborn `main`.
 */
export const create = async (): Promise<GitRepo> => {
  const dir = await Fs.realpath(await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-git-")))
  await git(dir, ["init", "--quiet", "--bare"])
  const run = (...args: ReadonlyArray<string>) => git(dir, args)
  const pending = new Map<string, string | Uint8Array | Link | Executable | null>()
  // Commits in one repository get distinct dates, so a commit that changes nothing still gets a new sha.
  let commits = 0
  const current = async () => (await run("symbolic-ref", "HEAD")).trim()
  const tip = async (ref: string) => {
    try {
      return (await run("rev-parse", "--verify", "--quiet", `${ref}^{commit}`)).trim()
    } catch {
      return undefined
    }
  }
  const head = async (branch = "HEAD") => {
    const sha = await tip(branch === "HEAD" ? "HEAD" : `refs/heads/${branch}`) ?? await tip(branch)
    if (sha === undefined) throw new Error(`no commit at ${branch}`)
    return sha
  }
  const write = async (files: Files) => {
    for (const [path, content] of Object.entries(files)) pending.set(checkPath(path), content)
  }
  const commit = async (message: string) => {
    const ref = await current()
    const parent = await tip(ref)
    const seconds = Date.UTC(2026, 0, 1) / 1000 + 60 * commits++
    const chunks: Array<Buffer> = [
      Buffer.from(`commit ${ref}\n`),
      Buffer.from(`author Test Author <author@example.test> ${seconds} +0000\n`),
      Buffer.from(`committer Test Committer <committer@example.test> ${seconds} +0000\n`),
      ...data(message),
      Buffer.from(parent === undefined ? "" : `from ${parent}\n`)
    ]
    for (const [path, content] of pending) {
      if (content === null) chunks.push(Buffer.from(`D ${path}\n`))
      else if (typeof content === "object" && "link" in content) chunks.push(Buffer.from(`M 120000 inline ${path}\n`), ...data(content.link))
      else if (typeof content === "object" && "executable" in content) chunks.push(Buffer.from(`M 100755 inline ${path}\n`), ...data(content.executable))
      else chunks.push(Buffer.from(`M 100644 inline ${path}\n`), ...data(content))
    }
    chunks.push(Buffer.from("done\n"))
    await git(dir, ["fast-import", "--quiet", "--done"], Buffer.concat(chunks))
    pending.clear()
    return head(ref)
  }
  return {
    dir,
    write,
    commit,
    commitFiles: async (files, message = "update") => {
      await write(files)
      return commit(message)
    },
    branch: async (name) => {
      await run("branch", name, await head())
    },
    checkout: async (name) => {
      await head(name)
      await run("symbolic-ref", "HEAD", `refs/heads/${name}`)
    },
    head,
    git: run,
    remove: () => Fs.rm(dir, { recursive: true, force: true })
  }
}

/**
 * An existing repository of yours (a work tree's folder or a bare repository), to serve as it is: FakeGitHub reads its
 * branches and objects with git. `write` and `commit` are refused (commit in the repository yourself) and `remove`
 * leaves it alone.
 */
export const open = async (path: string): Promise<GitRepo> => {
  const dir = await Fs.realpath(path)
  const run = (...args: ReadonlyArray<string>) => git(dir, args)
  await run("rev-parse", "--git-dir")
  const refused = () => Promise.reject(new Error(`${dir} is opened as it is: commit in it with git`))
  const head = async (branch = "HEAD") => (await run("rev-parse", "--verify", "--quiet", `${branch}^{commit}`)).trim()
  return {
    dir,
    write: refused,
    commit: refused,
    commitFiles: refused,
    branch: async (name) => {
      await run("branch", name, await head())
    },
    checkout: refused,
    head,
    git: run,
    remove: () => Promise.resolve()
  }
}

/** A repository whose first commit on `main` holds `files`. */
export const withFiles = async (files: Files, message = "initial"): Promise<GitRepo> => {
  const repo = await create()
  await repo.commitFiles(files, message)
  return repo
}

/**
 * `count` small files spread over nested folders (`dir-<a>/dir-<b>/file-<n>.md`, about `perFolder` per folder):
 * the shape of a large repository, for truncation and benchmarks.
 */
export const manyFiles = (count: number, options: { readonly perFolder?: number; readonly prefix?: string } = {}): Record<string, string> => {
  const perFolder = options.perFolder ?? 100
  const prefix = options.prefix ?? ""
  const files: Record<string, string> = {}
  for (let n = 0; n < count; n++) {
    const folder = Math.floor(n / perFolder)
    files[`${prefix}dir-${Math.floor(folder / 10)}/dir-${folder % 10}/file-${n}.md`] = `# File ${n}\n\nContent of file ${n}.\n`
  }
  return files
}
