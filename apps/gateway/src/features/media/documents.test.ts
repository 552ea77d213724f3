import { describe, expect, it } from 'vitest';
import { makeDocx, makePdf } from '../../../../../test/helpers/files.js';
import { handlingOf } from './classify.js';
import { CorruptFileError, extractDocumentText } from './documents.js';

const LIMITS = { maxPages: 50, maxChars: 10_000 };

describe('extractDocumentText', () => {
  it('reads every page of a PDF, and cuts at the page limit with a note saying so', async () => {
    const pdf = makePdf(['First page', 'Second page', 'Third page']);
    expect(await extractDocumentText('pdf', pdf, LIMITS)).toEqual({ text: 'First page\n\nSecond page\n\nThird page', pages: 3 });
    const cut = await extractDocumentText('pdf', pdf, { ...LIMITS, maxPages: 2 });
    expect(cut).toEqual({ text: 'First page\n\nSecond page', pages: 3, cut: 'only the first 2 of 3 pages were read' });
  });

  it('reads the paragraphs of a Word document', async () => {
    const r = await extractDocumentText('docx', makeDocx(['Minutes of the meeting', 'Budget approved: 12,000 EUR']), LIMITS);
    expect(r.text).toBe('Minutes of the meeting\n\nBudget approved: 12,000 EUR');
  });

  it('cuts long text at the character limit, visibly', async () => {
    const r = await extractDocumentText('text', Buffer.from('a'.repeat(500)), { ...LIMITS, maxChars: 100 });
    expect(r.text).toHaveLength(100);
    expect(r.cut).toBe('only the first 100 of 500 characters were read');
  });

  it('refuses damaged files as CorruptFileError: a broken PDF, a broken Word file, "text" with NUL bytes', async () => {
    await expect(extractDocumentText('pdf', Buffer.from('%PDF-1.7 garbage'), LIMITS)).rejects.toBeInstanceOf(CorruptFileError);
    await expect(extractDocumentText('docx', Buffer.from('PK not a zip'), LIMITS)).rejects.toBeInstanceOf(CorruptFileError);
    await expect(extractDocumentText('text', Buffer.from([0x41, 0x00, 0x42]), LIMITS)).rejects.toBeInstanceOf(CorruptFileError);
  });
});

describe('handlingOf', () => {
  it('sorts files by what can be done with them', () => {
    expect(handlingOf({ kind: 'image', mimeType: 'image/png' })).toEqual({ as: 'image' });
    expect(handlingOf({ kind: 'image', mimeType: 'image/heic', name: 'IMG.heic' })).toMatchObject({ as: 'unsupported' });
    expect(handlingOf({ kind: 'audio', mimeType: 'audio/ogg', voice: true })).toEqual({ as: 'audio', uploadName: 'voice.ogg' });
    expect(handlingOf({ kind: 'audio', mimeType: 'audio/mpeg', name: 'talk.mp3' })).toEqual({ as: 'audio', uploadName: 'talk.mp3' });
    expect(handlingOf({ kind: 'audio', mimeType: 'audio/x-ms-wma' })).toMatchObject({ as: 'unsupported' });
    expect(handlingOf({ kind: 'file', mimeType: 'application/pdf' })).toEqual({ as: 'pdf' });
    expect(handlingOf({ kind: 'file', name: 'letter.docx' })).toEqual({ as: 'docx' });
    expect(handlingOf({ kind: 'file', mimeType: 'application/octet-stream', name: 'main.rs' })).toEqual({ as: 'text' });
    expect(handlingOf({ kind: 'file', mimeType: 'application/json' })).toEqual({ as: 'text' });
    expect(handlingOf({ kind: 'video', mimeType: 'video/mp4' })).toEqual({ as: 'unsupported', why: 'videos are not supported' });
    expect(handlingOf({ kind: 'file', mimeType: 'application/zip', name: 'a.zip' })).toMatchObject({ as: 'unsupported' });
  });
});
