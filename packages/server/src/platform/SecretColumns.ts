/**
 * Every column that holds a secret encrypted at rest (platform/Crypto.ts), in one list: where each ciphertext is
 * bound (its table, its column, its organization and the columns naming its row, the additional authenticated data
 * of AES-GCM), so a ciphertext moved to another column, row or organization does not decrypt. The start-up upgrade
 * of old ciphertexts and `orgplane keys rotate` (platform/StoredSecrets.ts) walk this list; a new encrypted column
 * is added here or it is neither bound nor rotated. A ciphertext's place is what it authenticates, so a name changed
 * here would unbind every secret of its column.
 */

/** One encrypted column. */
export interface SecretColumn {
  readonly table: string
  readonly column: string
  /**
   * `organization`: a secret of one organization, in a tenant table, bound to its `organization_id` and row;
   * `instance`: a secret of the instance itself (the cursor key), in a table without `organization_id`.
   */
  readonly scope: "organization" | "instance"
  /**
   * Columns that, with `organization_id`, name one row (none: the organization has one such row); for an instance
   * secret, the columns that alone name it.
   */
  readonly row: ReadonlyArray<string>
  /** What the column holds, in words, for messages: "the MCP connection's API key". */
  readonly holds: string
}

/**
 * Where one ciphertext lives: its column, organization and row (the values of `column.row`, in order). An instance
 * secret's organization is `INSTANCE` (no organization id is empty).
 */
export interface Binding {
  readonly column: SecretColumn
  readonly organizationId: string
  readonly row: ReadonlyArray<string>
}

/** The organization of an instance secret's binding: none. */
export const INSTANCE = ""

const column = (table: string, name: string, row: ReadonlyArray<string>, holds: string): SecretColumn => ({
  table,
  column: name,
  scope: "organization",
  row,
  holds
})

const instanceColumn = (table: string, name: string, row: ReadonlyArray<string>, holds: string): SecretColumn => ({
  table,
  column: name,
  scope: "instance",
  row,
  holds
})

/** A ciphertext's place: `bind(SecretColumns.mcpApiKey, organizationId, connectionId)`. */
export const bind = (column: SecretColumn, organizationId: string, ...row: ReadonlyArray<string>): Binding => {
  if (row.length !== column.row.length) {
    throw new Error(`${column.table}.${column.column} is bound to ${column.row.length} row column(s), given ${row.length}`)
  }
  if ((column.scope === "instance") !== (organizationId === INSTANCE)) {
    throw new Error(`${column.table}.${column.column} holds ${column.scope === "instance" ? "an instance" : "an organization's"} secret`)
  }
  return { column, organizationId, row }
}

/** An instance secret's place: `bindInstance(SecretColumns.cursorKey, "cursor_key")`. */
export const bindInstance = (column: SecretColumn, ...row: ReadonlyArray<string>): Binding => bind(column, INSTANCE, ...row)

export const SecretColumns = {
  connectorToken: column("connector_accounts", "token_ciphertext", ["id"], "the connector account's token"),
  ssoClientSecret: column("sso_connections", "oidc_client_secret_ciphertext", ["id"], "the SSO connection's OIDC client secret"),
  ssoCodeVerifier: column("sso_intents", "code_verifier_ciphertext", ["id"], "the SSO sign-in's PKCE verifier"),
  workerRuntimeCredential: column("worker_instances", "runtime_credential_ciphertext", ["id"], "the worker's runtime credential"),
  mcpApiKey: column("mcp_connections", "api_key_ciphertext", ["id"], "the MCP connection's API key"),
  mcpAccessToken: column("mcp_connections", "access_token_ciphertext", ["id"], "the MCP connection's access token"),
  mcpRefreshToken: column("mcp_connections", "refresh_token_ciphertext", ["id"], "the MCP connection's refresh token"),
  mcpOAuthClientSecret: column("mcp_connections", "oauth_client_secret_ciphertext", ["id"], "the MCP connection's OAuth client secret"),
  mcpMemberAccessToken: column(
    "mcp_member_credentials",
    "access_token_ciphertext",
    ["mcp_connection_id", "membership_id"],
    "the member's access token for the MCP connection"
  ),
  mcpMemberRefreshToken: column(
    "mcp_member_credentials",
    "refresh_token_ciphertext",
    ["mcp_connection_id", "membership_id"],
    "the member's refresh token for the MCP connection"
  ),
  mcpCodeVerifier: column("mcp_oauth_authorizations", "code_verifier_ciphertext", ["id"], "the MCP authorization's PKCE verifier"),
  suiteClientSecret: column("suite_clients", "client_secret_ciphertext", ["suite"], "the suite client's secret"),
  suiteAccessToken: column("suite_credentials", "access_token_ciphertext", ["suite", "membership_id"], "the member's suite access token"),
  suiteRefreshToken: column("suite_credentials", "refresh_token_ciphertext", ["suite", "membership_id"], "the member's suite refresh token"),
  suiteCodeVerifier: column("suite_authorizations", "code_verifier_ciphertext", ["id"], "the suite authorization's PKCE verifier"),
  llmCredential: column("llm_providers", "credential_ciphertext", ["id"], "the LLM provider's credential"),
  llmHeaders: column("llm_providers", "headers_ciphertext", ["id"], "the LLM provider's extra headers"),
  auditStreamSecret: column("audit_streams", "secret_ciphertext", ["id"], "the audit stream's signing secret"),
  cursorKey: instanceColumn("instance_secrets", "ciphertext", ["name"], "the instance's cursor key")
} as const

/** The list the upgrade and the rotation walk. */
export const allSecretColumns: ReadonlyArray<SecretColumn> = Object.values(SecretColumns)

/** The two token columns of one stored OAuth credential. */
export interface TokenColumns {
  readonly access: SecretColumn
  readonly refresh: SecretColumn
}

/** Where one OAuth credential's tokens are bound. */
export interface TokenBindings {
  readonly access: Binding
  readonly refresh: Binding
}

export const bindTokens = (columns: TokenColumns, organizationId: string, ...row: ReadonlyArray<string>): TokenBindings => ({
  access: bind(columns.access, organizationId, ...row),
  refresh: bind(columns.refresh, organizationId, ...row)
})

export const McpSharedTokens: TokenColumns = { access: SecretColumns.mcpAccessToken, refresh: SecretColumns.mcpRefreshToken }
export const McpMemberTokens: TokenColumns = { access: SecretColumns.mcpMemberAccessToken, refresh: SecretColumns.mcpMemberRefreshToken }
export const SuiteTokens: TokenColumns = { access: SecretColumns.suiteAccessToken, refresh: SecretColumns.suiteRefreshToken }
