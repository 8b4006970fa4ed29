/**
 * suite-b's calendar through Google Calendar v3 (pure): the conference request that adds a Meet link to an existing
 * event of the primary calendar (`PATCH …/events/{id}?conferenceDataVersion=1`, without which Calendar ignores
 * `conferenceData`), and an event mapped to the API's answer.
 */
import type { CalendarEventResult } from "@orgplane/schema"

/** `<base>/calendar/v3/calendars/primary/events/<id>`, the id encoded as one path segment. */
export const eventUrl = (apiBaseUrl: string, eventId: string) =>
  `${apiBaseUrl.replace(/\/+$/, "")}/calendar/v3/calendars/primary/events/${encodeURIComponent(eventId)}`

/** The PATCH that asks for a conference; `requestId` makes a retried request the same request. */
export const meetLinkPatch = (requestId: string) => ({
  conferenceData: { createRequest: { requestId, conferenceSolutionKey: { type: "hangoutsMeet" } } }
})

const text = (value: unknown) => (typeof value === "string" ? value : "")
const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

/** A start or end: its date-time, or the date of an all-day event. */
const instant = (value: unknown) => {
  const time = record(value)
  return text(time.dateTime) || text(time.date)
}

/** The event's meeting link: `hangoutLink`, else the first video entry point with a URI. */
export const meetLinkOf = (event: Record<string, unknown>): string | null => {
  const hangout = text(event.hangoutLink)
  if (hangout !== "") return hangout
  const entryPoints = record(event.conferenceData).entryPoints
  for (const entry of Array.isArray(entryPoints) ? entryPoints : []) {
    const point = record(entry)
    if (point.entryPointType === "video" && text(point.uri) !== "") return text(point.uri)
  }
  return null
}

/** The event as the API answers it; undefined without an id. */
export const toEventResult = (event: Record<string, unknown>): CalendarEventResult | undefined => {
  const id = text(event.id)
  if (id === "") return undefined
  return {
    ok: true,
    eventId: id,
    htmlLink: text(event.htmlLink),
    summary: text(event.summary),
    start: instant(event.start),
    end: instant(event.end),
    meetLink: meetLinkOf(event)
  }
}
