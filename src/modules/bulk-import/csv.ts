/**
 * A streaming CSV reader (RFC 4180): records separated by CRLF or LF, fields by commas, a field in
 * double quotes may hold commas, line breaks and doubled quotes (`""`). A UTF-8 byte-order mark
 * before the first field is dropped. Records come out as they complete, so a file of any size is
 * read with memory bounded by its longest record (`maxRecordChars`).
 */

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    /** The 1-based line of the file where the problem is (a quoted field may span lines). */
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
  }
}

export interface CsvRecord {
  fields: string[];
  /** The 1-based line the record starts on. */
  line: number;
}

/** Reads `chunks` (text decoded by the caller, or UTF-8 bytes) as CSV records. */
export async function* csvRecords(
  chunks: AsyncIterable<Buffer | string>,
  opts: { maxRecordChars?: number } = {},
): AsyncGenerator<CsvRecord> {
  const maxRecordChars = opts.maxRecordChars ?? 64 * 1024;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let fields: string[] = [];
  let field = '';
  let recordChars = 0;
  /** The field began with a quote and its closing quote has not been seen. */
  let quoted = false;
  /** Inside a quoted field, the previous character was a quote (a closing one, or the first of `""`). */
  let quoteSeen = false;
  /** The current field's text was closed by a quote: only a separator may follow. */
  let closed = false;
  let atFieldStart = true;
  let line = 1;
  let recordLine = 1;
  let first = true;
  let pendingCR = false;

  const endField = () => {
    fields.push(field);
    field = '';
    quoted = false;
    quoteSeen = false;
    closed = false;
    atFieldStart = true;
  };
  const endRecord = (): CsvRecord => {
    endField();
    const r = { fields, line: recordLine };
    fields = [];
    recordChars = 0;
    return r;
  };

  const decode = (c: Buffer | string, last: boolean): string => {
    try {
      return typeof c === 'string' ? c : decoder.decode(c, { stream: !last });
    } catch {
      throw new CsvSyntaxError('the file is not UTF-8 text', line);
    }
  };

  for await (const chunk of chunks) {
    let text = decode(chunk, false);
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (pendingCR) {
        pendingCR = false;
        if (ch === '\n') continue; // CRLF: the record ended at the CR.
      }
      if (++recordChars > maxRecordChars) throw new CsvSyntaxError(`a record is longer than ${maxRecordChars} characters`, recordLine);
      if (quoted) {
        if (quoteSeen) {
          quoteSeen = false;
          if (ch === '"') {
            field += '"';
            continue;
          }
          // The quote before this character closed the field.
          quoted = false;
          closed = true;
        } else if (ch === '"') {
          quoteSeen = true;
          continue;
        } else {
          if (ch === '\n') line++;
          field += ch;
          continue;
        }
      }
      if (ch === ',') {
        endField();
        continue;
      }
      if (ch === '\n' || ch === '\r') {
        if (ch === '\r') pendingCR = true;
        const r = endRecord();
        line++;
        recordLine = line;
        yield r;
        continue;
      }
      if (closed) throw new CsvSyntaxError('a quoted field must be followed by a comma or the end of the record', line);
      if (ch === '"') {
        if (!atFieldStart) throw new CsvSyntaxError('a quote inside an unquoted field', line);
        quoted = true;
        atFieldStart = false;
        continue;
      }
      atFieldStart = false;
      field += ch;
    }
  }
  const rest = decode(Buffer.alloc(0), true);
  if (rest.length > 0) throw new CsvSyntaxError('the file ends inside a UTF-8 character', line);
  if (quoted && !quoteSeen) throw new CsvSyntaxError('a quoted field is not closed', recordLine);
  // A last record without a line break.
  if (fields.length > 0 || field.length > 0 || quoteSeen || closed) yield endRecord();
}
