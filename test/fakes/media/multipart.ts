/**
 * Reading a multipart/form-data body the way a server does, with the platform's own parser out of the picture:
 * the WHATWG `Response.formData()` of Node's fetch (undici), which handles binary parts and any boundary.
 */

export interface UploadedPart {
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export interface MultipartBody {
  fields: Record<string, string>;
  files: UploadedPart[];
}

export function isMultipart(contentType: string | undefined): boolean {
  return (contentType ?? '').toLowerCase().startsWith('multipart/form-data');
}

/** Throws when the body is not valid multipart for that content type. */
export async function parseMultipart(body: Buffer, contentType: string): Promise<MultipartBody> {
  const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  const out: MultipartBody = { fields: {}, files: [] };
  for (const [field, value] of form) {
    if (typeof value === 'string') out.fields[field] = value;
    else out.files.push({ field, filename: value.name, contentType: value.type, data: Buffer.from(await value.arrayBuffer()) });
  }
  return out;
}

/** The whole request body as bytes. */
export async function readRaw(req: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
