/** Every migration, in order. Append only: a released migration is never edited. */
import type { Migration } from "../platform/Migrator.js"
import identity from "./0001_identity.js"
import staff from "./0002_staff.js"
import tenancy from "./0003_tenancy.js"
import catalog from "./0004_catalog.js"
import connectors from "./0005_connectors.js"
import discoveryApply from "./0006_discovery_apply.js"
import connectorCandidateKeys from "./0007_connector_candidate_keys.js"
import desktopPolicies from "./0008_desktop_policies.js"
import sso from "./0009_sso.js"
import memory from "./0010_memory.js"
import telemetry from "./0011_telemetry.js"
import workers from "./0012_workers.js"
import mcpConnections from "./0013_mcp_connections.js"
import suiteCapabilities from "./0014_suite_capabilities.js"
import idempotencyKeys from "./0015_idempotency_keys.js"
import componentFiles from "./0016_component_files.js"
import connectorSkippedFiles from "./0017_connector_skipped_files.js"
import ssoConnections from "./0018_sso_connections.js"
import llmProviders from "./0019_llm_providers.js"
import templates from "./0020_templates.js"
import workerActivity from "./0021_worker_activity.js"
import ssoSamlAssertions from "./0022_sso_saml_assertions.js"
import ssoExpiry from "./0023_sso_expiry.js"
import samlMetadataRefresh from "./0024_saml_metadata_refresh.js"
import scim from "./0025_scim.js"
import audit from "./0026_audit.js"
import auditChanges from "./0027_audit_changes.js"
import auditStreams from "./0028_audit_streams.js"
import auditActionFamily from "./0029_audit_action_family.js"
import auditAnonymous from "./0030_audit_anonymous.js"
import instanceSecrets from "./0031_instance_secrets.js"
import accountTakeover from "./0032_account_takeover.js"
import signInAddresses from "./0033_sign_in_addresses.js"
import apiKeyScopes from "./0034_api_key_scopes.js"
import memberDirectory from "./0035_member_directory.js"
import sessionActivity from "./0036_session_activity.js"
import organizationLifecycle from "./0037_organization_lifecycle.js"
import accountLifecycle from "./0039_account_lifecycle.js"
import accountTokens from "./0041_account_tokens.js"
import accountOwnership from "./0042_account_ownership.js"
import apiKeyPeople from "./0043_api_key_people.js"
import pluginCandidateNames from "./0044_plugin_candidate_names.js"
import pluginNamesPerSource from "./0045_plugin_names_per_source.js"
import auditChannel from "./0046_audit_channel.js"
import invitationDelivery from "./0047_invitation_delivery.js"
import componentFileModes from "./0048_component_file_modes.js"
import auditPlanHash from "./0049_audit_plan_hash.js"
import organizationDocuments from "./0050_organization_documents.js"
import documentSecrets from "./0051_document_secrets.js"

export const migrations: ReadonlyArray<Migration> = [
  { id: 1, name: "identity", up: identity },
  { id: 2, name: "staff", up: staff },
  { id: 3, name: "tenancy", up: tenancy },
  { id: 4, name: "catalog", up: catalog },
  { id: 5, name: "connectors", up: connectors },
  { id: 6, name: "discovery_apply", up: discoveryApply },
  { id: 7, name: "connector_candidate_keys", up: connectorCandidateKeys },
  { id: 8, name: "desktop_policies", up: desktopPolicies },
  { id: 9, name: "sso", up: sso },
  { id: 10, name: "memory", up: memory },
  { id: 11, name: "telemetry", up: telemetry },
  { id: 12, name: "workers", up: workers },
  { id: 13, name: "mcp_connections", up: mcpConnections },
  { id: 14, name: "suite_capabilities", up: suiteCapabilities },
  { id: 15, name: "idempotency_keys", up: idempotencyKeys },
  { id: 16, name: "component_files", up: componentFiles },
  { id: 17, name: "connector_skipped_files", up: connectorSkippedFiles },
  { id: 18, name: "sso_connections", up: ssoConnections },
  { id: 19, name: "llm_providers", up: llmProviders },
  { id: 20, name: "templates", up: templates },
  { id: 21, name: "worker_activity", up: workerActivity },
  { id: 22, name: "sso_saml_assertions", up: ssoSamlAssertions },
  { id: 23, name: "sso_expiry", up: ssoExpiry },
  { id: 24, name: "saml_metadata_refresh", up: samlMetadataRefresh },
  { id: 25, name: "scim", up: scim },
  { id: 26, name: "audit", up: audit },
  { id: 27, name: "audit_changes", up: auditChanges },
  { id: 28, name: "audit_streams", up: auditStreams },
  { id: 29, name: "audit_action_family", up: auditActionFamily },
  { id: 30, name: "audit_anonymous", up: auditAnonymous },
  { id: 31, name: "instance_secrets", up: instanceSecrets },
  { id: 32, name: "account_takeover", up: accountTakeover },
  { id: 33, name: "sign_in_addresses", up: signInAddresses },
  { id: 34, name: "api_key_scopes", up: apiKeyScopes },
  { id: 35, name: "member_directory", up: memberDirectory },
  { id: 36, name: "session_activity", up: sessionActivity },
  { id: 37, name: "organization_lifecycle", up: organizationLifecycle },
  { id: 39, name: "account_lifecycle", up: accountLifecycle },
  { id: 41, name: "account_tokens", up: accountTokens },
  { id: 42, name: "account_ownership", up: accountOwnership },
  { id: 43, name: "api_key_people", up: apiKeyPeople },
  { id: 44, name: "plugin_candidate_names", up: pluginCandidateNames },
  { id: 45, name: "plugin_names_per_source", up: pluginNamesPerSource },
  { id: 46, name: "audit_channel", up: auditChannel },
  { id: 47, name: "invitation_delivery", up: invitationDelivery },
  { id: 48, name: "component_file_modes", up: componentFileModes },
  { id: 49, name: "audit_plan_hash", up: auditPlanHash },
  { id: 50, name: "organization_documents", up: organizationDocuments },
  { id: 51, name: "document_secrets", up: documentSecrets }
]

/**
 * Where the migrations' code is (this module; from source, the folder beside it): the embedded database's template
 * is keyed by a fingerprint of it (platform/EmbeddedTemplate.ts).
 */
export const migrationsUrl: string = import.meta.url
