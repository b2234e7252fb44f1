import { PassThrough } from 'node:stream';
import type { Readable } from 'node:stream';

/** Text, Excel's `@` number format: a column typed so, a value pasted or typed later stays text too. */
const TEXT = '@';

/**
 * One-sheet .xlsx of text cells, streamed: rows are committed as they come
 * (exceljs's streaming writer, inline strings rather than a shared-string
 * table), so a report of any length is written in bounded memory. Every cell
 * is a string in a text-typed column: a last four of `0123` stays `0123`,
 * and a cell is never read as a formula, a date or a number. exceljs is
 * loaded on the first workbook, not with the function: its module code (about
 * 1 MB) is in the bundle either way, but running it costs a cold start ~80 ms.
 */
export function workbookStream(sheet: { name: string; columns: readonly string[]; created: Date }, rows: AsyncIterable<readonly string[]>): Readable {
  const output = new PassThrough();
  (async () => {
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, useSharedStrings: false, useStyles: true });
    // From the data, not the clock: the same month gives the same properties.
    workbook.created = sheet.created;
    workbook.modified = sheet.created;
    const worksheet = workbook.addWorksheet(sheet.name.slice(0, 31), { views: [{ state: 'frozen', ySplit: 1 }] });
    worksheet.columns = sheet.columns.map((header) => ({ header, key: header, width: Math.max(10, header.length + 2), style: { numFmt: TEXT } }));
    worksheet.getRow(1).font = { bold: true };
    for await (const cells of rows) worksheet.addRow([...cells]).commit();
    worksheet.commit();
    await workbook.commit();
  })().catch((error: unknown) => output.destroy(error as Error));
  return output;
}
