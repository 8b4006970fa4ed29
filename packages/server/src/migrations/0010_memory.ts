/**
 * The memory bank: a person's memories in one organization (keyed by the person, so they survive leaving and
 * rejoining), and the conversation snippets behind each. `search` is the memory's text-search document (content
 * weighted A, tags B, `english` configuration), written by the INSERT itself: a generated column cannot use
 * `array_to_string` on the tags (it is only stable, not immutable).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE memories (
  organization_id text NOT NULL REFERENCES organizations (id),
  id text NOT NULL,
  user_id text NOT NULL REFERENCES users (id),
  membership_id text NOT NULL,
  content text NOT NULL CHECK (char_length(content) BETWEEN 1 AND 8000),
  tags text[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 32),
  source text NOT NULL,
  scope text NOT NULL DEFAULT 'user' CHECK (scope = 'user'),
  search tsvector NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id)
);
-- Lists (newest first), and a person's own rows first when searching: a person has few memories, all of them
-- few rows, so the planner can read them by this index and filter with @@ rather than scan the GIN index.
CREATE INDEX memories_owner_idx ON memories (organization_id, user_id, created_at DESC, id DESC);
CREATE INDEX memories_search_idx ON memories USING GIN (search);

CREATE TABLE memory_contexts (
  organization_id text NOT NULL,
  id text NOT NULL,
  memory_id text NOT NULL,
  position smallint NOT NULL,
  snippet text NOT NULL CHECK (char_length(snippet) BETWEEN 1 AND 4000),
  conversation_id text,
  message_id text,
  origin text CHECK (origin IN ('active_conversation', 'searched_conversation')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, memory_id, position),
  FOREIGN KEY (organization_id, memory_id) REFERENCES memories (organization_id, id) ON DELETE CASCADE
);
`))
