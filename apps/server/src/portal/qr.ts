// The portal's one QR code drawing: the TOTP set-up (mfa.ts) and a payment link's share code
// (routes/links.ts) both answer this path, and the page turns it into an SVG (portal-ui ui.ts qrSvg).
import qrcode from 'qrcode-generator';

/**
 * The QR code of `text` as one SVG path (modules of a `size`-square viewBox, 4 of quiet zone). Made
 * here rather than in the page: the QR library would grow the portal's bundle past its budget, and
 * the page builds the SVG from this path (no markup).
 */
export function qrPath(text: string): { size: number; path: string } {
  const qr = qrcode(0, 'M');
  qr.addData(text, 'Byte');
  qr.make();
  const n = qr.getModuleCount();
  let d = '';
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) if (qr.isDark(y, x)) d += `M${x + 4} ${y + 4}h1v1h-1z`;
  return { size: n + 8, path: d };
}
