/**
 * A scrape read with a Prometheus text-format parser from npm (`prom2javascript`: it throws on a line it cannot
 * read), and the PromQL of dashboards and rules read with Prometheus' own grammar (`@prometheus-io/lezer-promql`):
 * the metric names an expression selects.
 */
import { parser } from "@prometheus-io/lezer-promql"
import {
  getMetricsFromIterator,
  type PromData,
  type PromHistogramData,
  type PromLabels,
  type PromMetrics,
  type PromSummaryData
} from "prom2javascript"

export type Scrape = PromMetrics

/** The families of a scrape, by name; rejects text the parser cannot read. */
export const parse = (text: string): Promise<Scrape> => getMetricsFromIterator(text.split("\n")[Symbol.iterator]())

/** Whether `labels` are exactly `expected`. */
const same = (labels: PromLabels, expected: Readonly<Record<string, string>>) => {
  const keys = Object.keys(labels)
  return keys.length === Object.keys(expected).length && keys.every((key) => labels[key] === expected[key])
}

/** The sample of `name` whose labels are exactly `labels`, or undefined. */
export const sample = (scrape: Scrape, name: string, labels: Readonly<Record<string, string>>) => {
  const data: ReadonlyArray<PromData | PromHistogramData | PromSummaryData> = scrape[name]?.data ?? []
  return data.find((found) => same(found.labels, labels))
}

/** A counter's or gauge's value, or a histogram's count; 0 when there is no such sample. */
export const valueOf = (scrape: Scrape, name: string, labels: Readonly<Record<string, string>>): number => {
  const found = sample(scrape, name, labels)
  if (found === undefined) return 0
  if ("value" in found) return found.value
  return found.count ?? 0
}

/** A histogram's buckets (upper bound → cumulative count), or undefined. */
export const bucketsOf = (scrape: Scrape, name: string, labels: Readonly<Record<string, string>>) => {
  const found = sample(scrape, name, labels)
  return found !== undefined && "buckets" in found ? found.buckets : undefined
}

/** Every sample name a scrape has: a histogram's as `_bucket`, `_count` and `_sum`, a summary's with `_count`, `_sum`. */
export const sampleNames = (scrape: Scrape): ReadonlySet<string> => {
  const names = new Set<string>()
  for (const [name, { type }] of Object.entries(scrape)) {
    names.add(name)
    if (type === "histogram") for (const suffix of ["_bucket", "_count", "_sum"]) names.add(name + suffix)
    if (type === "summary") for (const suffix of ["_count", "_sum"]) names.add(name + suffix)
  }
  return names
}

/** The metric names `expression` selects, and the part it cannot parse. Grafana's variables (`$__rate_interval`) read as `5m`. */
export const selectedNames = (expression: string): { readonly names: ReadonlyArray<string>; readonly error: string | undefined } => {
  const text = expression.replace(/\$__\w+/g, "5m")
  const cursor = parser.parse(text).cursor()
  const names: Array<string> = []
  let error: string | undefined
  do {
    if (cursor.name === "⚠" && error === undefined) error = `cannot parse ${JSON.stringify(text.slice(cursor.from, cursor.from + 40))} in ${text}`
    if (cursor.name === "Identifier" && cursor.node.parent?.name === "VectorSelector") names.push(text.slice(cursor.from, cursor.to))
  } while (cursor.next())
  return { names, error }
}
