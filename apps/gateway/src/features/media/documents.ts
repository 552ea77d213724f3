/**
 * Text out of documents: text-like files decoded as UTF-8, PDFs through unpdf (pdf.js), Word files through mammoth.
 * Limits cut the text with a visible note rather than dropping the file; a file that cannot be parsed throws
 * CorruptFileError.
 */
import { getDocumentProxy } from 'unpdf';
import mammoth from 'mammoth';

export class CorruptFileError extends Error {
  override name = 'CorruptFileError';
}

export interface TextLimits {
  maxPages: number;
  maxChars: number;
}

export interface ExtractedText {
  text: string;
  /** PDF page count, when the document has pages. */
  pages?: number;
  /** What was cut, in words a user understands ("only the first 50 of 120 pages were read"), when anything was. */
  cut?: string;
}

export async function extractDocumentText(as: 'pdf' | 'docx' | 'text', bytes: Buffer, limits: TextLimits): Promise<ExtractedText> {
  if (as === 'pdf') return pdfText(bytes, limits);
  if (as === 'docx') return clip({ text: await docxText(bytes) }, limits.maxChars);
  return clip({ text: plainText(bytes) }, limits.maxChars);
}

/** Text files: UTF-8 (a BOM dropped); a file with NUL bytes is not text, whatever its name says. */
function plainText(bytes: Buffer): string {
  if (bytes.includes(0)) throw new CorruptFileError('binary data in a text file');
  return new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(bytes);
}

async function pdfText(bytes: Buffer, limits: TextLimits): Promise<ExtractedText> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (err) {
    throw new CorruptFileError(`not a readable PDF (${err instanceof Error ? err.name : 'error'})`);
  }
  try {
    const pages = pdf.numPages;
    const read = Math.min(pages, limits.maxPages);
    const texts: string[] = [];
    for (let n = 1; n <= read; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      texts.push(
        content.items
          .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
          .join('')
          .trim(),
      );
      page.cleanup();
    }
    const cut = read < pages ? `only the first ${read} of ${pages} pages were read` : undefined;
    return clip({ text: texts.join('\n\n'), pages, ...(cut && { cut }) }, limits.maxChars);
  } catch (err) {
    if (err instanceof CorruptFileError) throw err;
    throw new CorruptFileError(`PDF text could not be read (${err instanceof Error ? err.name : 'error'})`);
  } finally {
    await pdf.loadingTask.destroy();
  }
}

async function docxText(bytes: Buffer): Promise<string> {
  try {
    return (await mammoth.extractRawText({ buffer: bytes })).value;
  } catch (err) {
    throw new CorruptFileError(`not a readable Word document (${err instanceof Error ? err.name : 'error'})`);
  }
}

/** At most `maxChars`, cut at a line break when one is near, with the cut said in `cut`. */
function clip(r: ExtractedText, maxChars: number): ExtractedText {
  const text = r.text.trim();
  if (text.length <= maxChars) return { ...r, text };
  const lineBreak = text.lastIndexOf('\n', maxChars);
  const end = lineBreak > maxChars * 0.8 ? lineBreak : maxChars;
  const note = `only the first ${end.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters were read`;
  return { ...r, text: text.slice(0, end).trimEnd(), cut: r.cut ? `${r.cut}, and ${note}` : note };
}
