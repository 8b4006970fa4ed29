/** The CLI's version, shown by `--version` and sent in the user agent: the package's own, the one source. */
import packageJson from "../package.json" with { type: "json" }

export const VERSION: string = packageJson.version
