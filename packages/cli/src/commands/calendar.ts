/**
 * `orgplane calendar meet`: the calendar suite (suite-b) as yourself, through your own connection
 * (`orgplane connections suite-b connect`).
 */
import { CalendarEventPath, CalendarEventResult, CapabilitiesApi } from "@orgplane/schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

export const meet = Commands.endpoint("meet", {
  summary: "Add a video-meeting link to an event of your primary calendar (an event that has one keeps it).",
  details: [
    "Acts through your own suite-b connection ('orgplane connections suite-b connect'); needs the calendarWrite feature. The link is added to the event itself: no second event is created."
  ],
  inputs: {
    eventId: Inputs.argument("eventId", { schema: CalendarEventPath.fields.eventId, description: "The event's id in your primary calendar." })
  },
  call: (client, { eventId }) => client.capabilities.patchCalendarEvent({ params: { eventId }, payload: { createMeetLink: true } }),
  output: CalendarEventResult,
  human: (event) =>
    [
      event.meetLink === null
        ? "The meeting link is being created: run the command again in a moment to see it."
        : `Meeting link: ${event.meetLink}`,
      Output.fields([
        ["  event", event.summary === "" ? event.eventId : `${event.summary} (${event.eventId})`],
        ["  when", `${event.start} – ${event.end}`],
        ["  link", event.htmlLink]
      ])
    ].join("\n")
})

export const calendar = Commands.group("calendar", "Add meeting links to your calendar's events, through your own suite-b connection.", [meet], [CapabilitiesApi])
