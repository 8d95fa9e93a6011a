// Exports: the API streams every matching row (CSV or JSON lines); the console saves the
// file and checks it holds as many records as the server counted (X-Total-Count), so a
// cut file is said, never saved silently as if whole.

import { call } from "./api.js";

// Records in a CSV text: its lines outside quotes, less the header.
export function csvRecords(text) {
  let records = 0, quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === 10 && !quoted) records++;
  }
  if (text.length && text[text.length - 1] !== "\n") records++;
  return Math.max(0, records - 1);
}

const jsonlRecords = (text) => text.split("\n").filter((line) => line.trim()).length;

// Saves `path`'s export under `name.csv` or `name.jsonl`; answers {count, total}. Throws
// when the file holds fewer records than the server counted.
export async function download(path, params, name, format) {
  const answer = await call("GET", path, { params: { ...params, format }, raw: true });
  const total = Number(answer.headers.get("X-Total-Count"));
  const text = await answer.text();
  const count = format === "csv" ? csvRecords(text) : jsonlRecords(text);
  if (Number.isFinite(total) && count !== total) {
    throw new Error(`The export was cut: ${count.toLocaleString("en")} of ${total.toLocaleString("en")} records arrived. Nothing was saved; try again.`);
  }
  const type = format === "csv" ? "text/csv" : "application/x-ndjson";
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `${name}.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return { count, total, file: a.download };
}

export function describeDownload({ count, file }, noun) {
  return `Downloaded ${file}: all ${count.toLocaleString("en")} ${noun}${count === 1 ? "" : "s"} of the period.`;
}
