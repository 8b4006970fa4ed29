/**
 * What `orgplane db restore` runs, and whose server `orgplane db dump` reads. A restore loads only a dump its
 * instance's keys signed, and of it only pg_dump's statements for orgplane's own schema: a crafted file with the
 * dump's header lines (a superuser role, `COPY … TO PROGRAM`, a `DO` block, `ALTER SYSTEM`, a table outside the
 * schema), unsigned or signed with the instance's key, an altered dump, an unsigned one and one signed with a key the
 * restore does not hold are refused, and nothing ran: no role, no file written by the program, the target empty,
 * into a Postgres database and into a new data folder. A dump signed with an older key of the ring restores. A dump
 * reads a snapshot only from a server of its own user: a channel folder others may enter, one another user owns or a
 * symbolic link, and a socket another user owns or a symbolic link, are refused, with no dump written, though a
 * server answers there with its database.
 */
import { PGlite } from "@electric-sql/pglite"
import { keyFileOf } from "@orgplane/server"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TestDatabase from "../../server/test/support/TestDatabase.js"
import { cleanup, fresh } from "./Harness.js"
import * as Postgres from "./Postgres.js"
import * as RealServer from "./RealServer.js"

if (!Postgres.reachable) console.warn(`DatabaseDumpTrust.test.ts's Postgres cases skipped: no Postgres listens at ${new URL(Postgres.url).host} (set DATABASE_URL to one)`)

const marker = NodeCrypto.randomBytes(5).toString("hex")
/** The role a crafted dump makes, and the file its program writes (as the database's user, on its host). */
const role = `orgplane_crafted_${marker}`
const written = `/tmp/orgplane-crafted-${marker}`

/** A dump's text signed as `orgplane db dump` signs it: the HMAC-SHA256 of all before the line, under the key's dump key. */
const signed = (body: string, kid: string, key: Buffer) => {
  const dumpKey = NodeCrypto.createHmac("sha256", key).update("orgplane db dump").digest()
  const mac = NodeCrypto.createHmac("sha256", dumpKey).update(body, "utf8").digest("base64url")
  return `${body}-- orgplane signature: hmac-sha256 key ${JSON.stringify(kid)} ${mac}\n`
}

/** The text a signed dump's signature covers: all of it without its last line (all of it, unsigned). */
const bodyOf = (dump: string) => {
  const at = dump.lastIndexOf("\n-- orgplane signature:")
  return at < 0 ? dump : dump.slice(0, at + 1)
}

/** What a crafted dump tries, each a statement pg_dump never writes for orgplane's schema (the first two: the report's). */
const crafted: ReadonlyArray<readonly [string, string]> = [
  ["a superuser role", `CREATE ROLE ${role} SUPERUSER LOGIN`],
  ["a command on the database's host", `COPY (SELECT 1) TO PROGRAM 'touch ${written}'`],
  ["a DO block", `DO $$BEGIN EXECUTE 'CREATE ROLE ${role} SUPERUSER'; END$$`],
  ["a server setting", "ALTER SYSTEM SET cluster_name = 'crafted'"],
  ["a table outside orgplane's schema", `CREATE TABLE information_schema.${role} (id int)`]
]

let home: string
let cli: Awaited<ReturnType<typeof fresh>>["cli"]
let genuine: string
let keys: string
let kid: string
let key: Buffer
/** The genuine dump's orgplane lines: what a crafted file starts with. */
let header: string

beforeAll(async () => {
  ;({ home, cli } = await fresh())
  const dataDir = Path.join(home, "data")
  const server = await RealServer.start({}, { data: dataDir })
  await server.close()
  const file = Path.join(home, "genuine.sql")
  const dumped = await cli(["db", "dump", "--data", dataDir, "--out", file])
  expect(dumped.code, dumped.stderr).toBe(0)
  genuine = await Fs.readFile(file, "utf8")
  keys = (await Fs.readFile(keyFileOf(dataDir), "utf8")).trim()
  kid = keys.slice(0, keys.indexOf(":"))
  key = Buffer.from(keys.slice(keys.indexOf(":") + 1), "base64")
  header = genuine.split("\n").slice(0, 3).join("\n") + "\n"
}, 600_000)

afterAll(async () => {
  if (Postgres.reachable) await Postgres.query(`DROP ROLE IF EXISTS ${role}`)
  await Fs.rm(written, { force: true })
  await Postgres.dropDatabases()
  await cleanup()
})

/** Writes `text` as a dump file and restores it with the instance's keys into `target` (`--database-url` or `--data`). */
const restore = async (text: string, target: ReadonlyArray<string>, env: Record<string, string> = { ORGPLANE_ENCRYPTION_KEYS: keys }) => {
  const file = Path.join(home, `dump-${NodeCrypto.randomBytes(4).toString("hex")}.sql`)
  await Fs.writeFile(file, text)
  return cli(["db", "restore", ...target, file], env)
}

const exists = (path: string) => Fs.access(path).then(() => true, () => false)

interface Target {
  readonly name: string
  readonly skip: boolean
  /** A new, empty target's flags. */
  readonly make: () => Promise<ReadonlyArray<string>>
  /** Nothing of a refused dump ran: the target holds nothing, and no role or file was made. */
  readonly untouched: (flags: ReadonlyArray<string>) => Promise<void>
}

const untouchedOutside = async () => {
  expect(await exists(written)).toBe(false)
  if (Postgres.reachable) expect(await Postgres.query(`SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = '${role}'`)).toEqual([])
}

const targets: ReadonlyArray<Target> = [
  {
    name: "a Postgres database",
    skip: !Postgres.reachable,
    make: async () => ["--database-url", await Postgres.newDatabase("orgplane_trust")],
    untouched: async (flags) => {
      await untouchedOutside()
      const relations = await Postgres.query(
        "SELECT count(*)::int AS n FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg\\_%'",
        flags[1]
      )
      expect(relations).toEqual([{ n: 0 }])
      expect(await Postgres.query(`SELECT 1 FROM pg_catalog.pg_class WHERE relname = '${role}'`, flags[1])).toEqual([])
    }
  },
  {
    name: "a new data folder",
    skip: false,
    make: async () => ["--data", Path.join(home, `restored-${NodeCrypto.randomBytes(4).toString("hex")}`, "data")],
    // The dump is judged whole before the target is opened: no database was made in the folder.
    untouched: async (flags) => {
      await untouchedOutside()
      expect(await exists(Path.join(flags[1]!, "PG_VERSION"))).toBe(false)
    }
  }
]

describe("orgplane db restore loads only its instance's own signed dump of orgplane's schema", { timeout: 600_000 }, () => {
  for (const target of targets) {
    describe.skipIf(target.skip)(`into ${target.name}`, () => {
      it("refuses a crafted file with the dump's header lines, unsigned, and runs none of it", async () => {
        const flags = await target.make()
        const refused = await restore(`${header}${crafted.slice(0, 2).map(([, statement]) => `${statement};\n`).join("")}`, flags)
        expect(refused.stderr).toContain("is not signed")
        expect(refused.code).not.toBe(0)
        await target.untouched(flags)
      })

      for (const [what, statement] of crafted) {
        it(`refuses ${what} even in a dump signed with the instance's key, and runs none of it`, async () => {
          const flags = await target.make()
          const refused = await restore(signed(`${bodyOf(genuine)}${statement};\n`, kid, key), flags)
          expect(refused.stderr).toContain("pg_dump does not write for orgplane's schema")
          expect(refused.stderr).toContain(statement.slice(0, 24))
          expect(refused.code).not.toBe(0)
          await target.untouched(flags)
        })
      }

      it("refuses a signed dump altered afterwards", async () => {
        const flags = await target.make()
        const altered = genuine.replace("INSERT INTO public.instance_setup_tokens VALUES ('", "INSERT INTO public.instance_setup_tokens VALUES ('0")
        expect(altered).not.toBe(genuine)
        const refused = await restore(altered, flags)
        expect(refused.stderr).toContain("was altered after it was written")
        expect(refused.code).not.toBe(0)
        await target.untouched(flags)
      })

      it("refuses an unsigned dump, as an older orgplane wrote it, saying to dump again", async () => {
        const flags = await target.make()
        const refused = await restore(bodyOf(genuine), flags)
        expect(refused.stderr).toContain("is not signed")
        expect(refused.stderr).toContain("dump the database again with this version")
        expect(refused.code).not.toBe(0)
        await target.untouched(flags)
      })

      it("refuses a dump signed with a key the restore does not hold, naming it", async () => {
        const flags = await target.make()
        const other = NodeCrypto.randomBytes(32)
        const refused = await restore(signed(bodyOf(genuine), "elsewhere", other), flags)
        expect(refused.stderr).toContain(`signed with key "elsewhere"`)
        expect(refused.code).not.toBe(0)
        await target.untouched(flags)
      })
    })
  }

  it.skipIf(!Postgres.reachable)("restores a dump signed with an older key while the ring holds it", async () => {
    const flags = await targets[0]!.make()
    const ring = `k2:${NodeCrypto.randomBytes(32).toString("base64")},${keys}`
    const restored = await restore(genuine, flags, { ORGPLANE_ENCRYPTION_KEYS: ring })
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toContain("Restored ")
  })
})

/**
 * A database of another user's: orgplane's own schema (the server tests' migrated embedded template, loaded in a
 * fraction of initdb's time) holding a marker the victim's never does.
 */
const foreignSnapshot = async () => {
  const db = await PGlite.create({ loadDataDir: await TestDatabase.embeddedMigrated() })
  await db.exec(`
    CREATE TABLE foreign_rows (note text);
    INSERT INTO foreign_rows VALUES ('served by another user');
  `)
  const tarball = new Uint8Array(await (await db.dumpDataDir("none")).arrayBuffer())
  await db.close()
  return tarball
}

/** Serves `tarball` on `path` as a running server answers `orgplane db dump` (platform/SnapshotChannel.ts). */
const serveSnapshot = (path: string, tarball: Uint8Array) =>
  new Promise<Net.Server>((resolve, reject) => {
    const server = Net.createServer((socket) => {
      socket.on("error", () => socket.destroy())
      socket.write(`${JSON.stringify({ bytes: tarball.byteLength })}\n`)
      socket.end(tarball)
    })
    server.once("error", reject)
    server.listen(path, () => resolve(server))
  })

const uid = process.getuid?.() ?? -1
const asRoot = uid === 0
/** Another user, as root may make files of: nobody. */
const otherUid = 65534

describe.skipIf(process.platform === "win32")("orgplane db dump reads a snapshot only from a server of its own user", { timeout: 120_000 }, () => {
  let tarball: Uint8Array
  beforeAll(async () => {
    tarball = await foreignSnapshot()
  }, 120_000)

  interface Channel {
    readonly folder: string
    readonly socket: string
    readonly tmp: string
  }

  /**
   * A data folder of the victim's (with its key file), and a server of another user's answering on its socket with
   * another database, the channel folder and socket shaped by `arrange` (and `listened`, once the socket is there),
   * in a temporary folder of the test's own
   * (TMPDIR) so that no other process's channels are touched; then `orgplane db dump` on the folder.
   */
  const dumpBeside = async (
    arrange: (channel: Channel) => Promise<string>,
    listened: (channel: Channel) => Promise<void> = async () => undefined
  ) => {
    const { home: victim, cli: run } = await fresh()
    const dataDir = Path.join(victim, "data")
    await Fs.mkdir(dataDir, { recursive: true })
    await Fs.writeFile(Path.join(dataDir, "PG_VERSION"), "18\n")
    await Fs.writeFile(keyFileOf(dataDir), `local:${NodeCrypto.randomBytes(32).toString("base64")}`, { mode: 0o600 })
    const tmp = Path.join(victim, "tmp")
    await Fs.mkdir(tmp, { mode: 0o700 })
    const folder = Path.join(tmp, `orgplane-${uid}`)
    const name = `${NodeCrypto.createHash("sha256").update(await Fs.realpath(dataDir)).digest("hex").slice(0, 24)}.sock`
    const channel = { folder, socket: Path.join(folder, name), tmp }
    const server = await serveSnapshot(await arrange(channel), tarball)
    await listened(channel)
    const out = Path.join(victim, "backup.sql")
    const before = process.env.TMPDIR
    process.env.TMPDIR = tmp
    try {
      const result = await run(["db", "dump", "--data", dataDir, "--out", out])
      return { ...result, written: await exists(out) }
    } finally {
      if (before === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = before
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }

  const expectRefused = (result: { readonly code: number; readonly stderr: string; readonly written: boolean }, why: string) => {
    expect(result.stderr).toContain(why)
    expect(result.code).not.toBe(0)
    expect(result.written).toBe(false)
  }

  it("refuses a channel folder others may enter", async () => {
    const result = await dumpBeside(async ({ folder, socket }) => {
      await Fs.mkdir(folder, { mode: 0o755 })
      await Fs.chmod(folder, 0o755)
      return socket
    })
    expectRefused(result, "others may enter it")
  })

  it.skipIf(!asRoot)("refuses a channel folder another user owns", async () => {
    const result = await dumpBeside(async ({ folder, socket }) => {
      await Fs.mkdir(folder, { mode: 0o700 })
      await Fs.chown(folder, otherUid, otherUid)
      return socket
    })
    expectRefused(result, `another user (uid ${otherUid}) owns it`)
  })

  it("refuses a channel folder that is a symbolic link", async () => {
    const result = await dumpBeside(async ({ folder, socket, tmp }) => {
      const elsewhere = Path.join(tmp, "elsewhere")
      await Fs.mkdir(elsewhere, { mode: 0o700 })
      await Fs.symlink(elsewhere, folder)
      return socket
    })
    expectRefused(result, "is not a folder (a symbolic link)")
  })

  it.skipIf(!asRoot)("refuses a socket another user owns", async () => {
    const result = await dumpBeside(async ({ folder, socket }) => {
      await Fs.mkdir(folder, { mode: 0o700 })
      return socket
    }, ({ socket }) => Fs.lchown(socket, otherUid, otherUid))
    expectRefused(result, `another user (uid ${otherUid}) owns it`)
  })

  it("refuses a socket that is a symbolic link", async () => {
    const result = await dumpBeside(async ({ folder, socket, tmp }) => {
      await Fs.mkdir(folder, { mode: 0o700 })
      const elsewhere = Path.join(tmp, "elsewhere.sock")
      await Fs.symlink(elsewhere, socket)
      return elsewhere
    })
    expectRefused(result, "is not a socket (a symbolic link)")
  })
})
