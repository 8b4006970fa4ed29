/**
 * Opening a URL in the person's browser, as `gh auth login --web` does: the platform's opener (`open` on macOS,
 * `xdg-open` elsewhere, `cmd /c start` on Windows), started without a shell and detached. Where none can run (no
 * display, no opener, `--no-browser`) the caller prints the URL instead.
 */
import * as ChildProcess from "node:child_process"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as CliConfig from "./Config.js"

/** The command that opens `url` on `platform`, or none where no browser can be opened (a Linux without a display). */
export const opener = (
  platform: NodeJS.Platform,
  url: string,
  display: { readonly x11: boolean; readonly wayland: boolean }
): Option.Option<{ readonly command: string; readonly args: ReadonlyArray<string>; readonly verbatim: boolean }> => {
  if (platform === "darwin") return Option.some({ command: "open", args: [url], verbatim: false })
  if (platform === "win32") {
    // `start` is a cmd built-in; its first quoted argument is a window title, and cmd reads `&` as "and then",
    // so the URL's metacharacters are escaped with `^` and the line passed verbatim (as gh does).
    return Option.some({ command: "cmd", args: ["/c", "start", "\"\"", url.replace(/[&^|<>]/g, "^$&")], verbatim: true })
  }
  if (!display.x11 && !display.wayland) return Option.none()
  return Option.some({ command: "xdg-open", args: [url], verbatim: false })
}

/**
 * Tries to open `url`: true when the opener started (it may still fail to find a browser, so callers print the URL
 * as well), false when there is none or it could not be started.
 */
export const open = Effect.fn("Browser.open")(function*(url: string) {
  const display = yield* Effect.orDie(CliConfig.display)
  const command = opener(process.platform, url, { x11: Option.isSome(display.x11), wayland: Option.isSome(display.wayland) })
  if (Option.isNone(command)) return false
  return yield* Effect.callback<boolean>((resume) => {
    let child: ChildProcess.ChildProcess
    try {
      child = ChildProcess.spawn(command.value.command, command.value.args, {
        stdio: "ignore",
        detached: true,
        shell: false,
        windowsVerbatimArguments: command.value.verbatim
      })
    } catch {
      return resume(Effect.succeed(false))
    }
    child.once("error", () => resume(Effect.succeed(false)))
    child.once("spawn", () => {
      child.unref()
      resume(Effect.succeed(true))
    })
  })
})
