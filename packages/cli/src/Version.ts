/** The CLI's version, shown by `--version` and sent in the user agent. Keep in step with package.json. */
export const VERSION = "0.0.0"
