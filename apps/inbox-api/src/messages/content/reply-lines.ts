/*
 * What a line of a reply is: the rules that tell the new text of a message from the quoted
 * history, reply headers, signatures and mobile footers that mail programs add, in the languages
 * they write them in. Each rule looks at one line, or at a few lines from one (never more than
 * HEADER_BLOCK_LINES), and their patterns cannot backtrack beyond a bounded span: linear in all.
 *
 * Lines are tested as `plainLine` gives them: without the emphasis and escapes that HTML
 * conversion puts around words (`**From:**`, `\--`) and trimmed.
 */

// Emphasis and escapes, and the invisible marks some programs put around dates and names.
const MARKUP = /[*_\\\u200b-\u200f\u202a-\u202e\u2060\ufeff]/g;

const endsWithColon = (text: string) => text.endsWith(':') || text.endsWith('：');

/** A line as the rules read it: without emphasis, escapes or invisible marks, trimmed. */
export function plainLine(line: string): string {
  return line.replace(MARKUP, '').trim();
}

/** A line of a `>` quote; in Markdown made from HTML, a `>` that the mail showed at a line's start is escaped. */
export function isQuoteLine(line: string): boolean {
  return /^ {0,3}\\?>/.test(line);
}

/** A quote line with nothing quoted on it: `>`, `> >`. */
export function isEmptyQuoteLine(line: string): boolean {
  return /^(?:\s*\\?>)+\s*$/.test(line);
}

/**
 * RFC 3676's signature delimiter "-- " (also when its trailing space was stripped, and as HTML
 * conversion escapes it, `\--`). Tested on the line as written: `-**-` is no delimiter.
 */
export function isSignatureDelimiter(line: string): boolean {
  return /^\s*\\?--\s*$/.test(line);
}

/** Three or more of one of `-`, `_` or `*`: the rule Outlook and others draw above a quoted message. */
export function isRule(line: string): boolean {
  return /^\s*\\?([-_*])(?:\s*\\?\1){2,}\s*$/.test(line);
}

/**
 * A long rule of underscores, dashes (`—`, `－`) or box lines (`─`, `━`) that a writer or a mailing
 * list drew above a signature or a footer: unlike `---` (a Markdown rule, which agents write), not
 * a mark people use inside their text.
 */
export function isSignatureRule(line: string): boolean {
  return /^\s*(?:(?:\\?_){10,}|[—－─━]{5,})\s*$/.test(line);
}

// ---------------------------------------------------------------------------------------------
// Mobile footers: "Sent from my iPhone" and its kin, as the mail apps of phones write them.

// Footers are short; longer lines are not tried.
const MAX_FOOTER_LENGTH = 100;
// What a footer names after its verb (a device or an app) is short: "my Verizon, Samsung Galaxy
// smartphone", never a sentence ("Sent from my desk, is much easier than my phone.").
const NAMED = '\\S+(?: \\S+){0,5}';
const MOBILE_FOOTER = new RegExp(
  `^(?:${[
    `Sent (?:wirelessly )?(?:from|with|via|using|by) ${NAMED}`, // Sent from my iPhone, Sent with Airmail, <<sent by galaxy>>
    `Envoy[ée] (?:de|depuis|à partir de|avec|par) ${NAMED}`, // Envoyé de mon iPhone
    `Von ${NAMED} gesendet\\.?`, // Von meinem iPhone gesendet
    `Gesendet (?:von|vom|mit|aus|über) ${NAMED}`, // Gesendet von meinem iPad
    `Diese Nachricht wurde (?:von|mit|auf) ${NAMED} gesendet\\.?`, // K-9 Mail in German
    `Enviad[oa] (?:desde|con|de|do|da|pelo|pela|a partir d[oa]|via) ${NAMED}`, // Enviado desde mi iPhone
    `Enviat (?:des del?|amb|de) ${NAMED}`, // Enviat des del meu iPhone
    `(?:Verstuurd|Verzonden) (?:vanaf|van|met|via) ${NAMED}`, // Verstuurd vanaf mijn iPhone
    `Inviato (?:da|dal|dalla|dallo|con|tramite) ${NAMED}`, // Inviato da iPhone
    `Skickat (?:från|med|via) ${NAMED}`, // Skickat från min iPhone
    `Sendt (?:fra|med|via) ${NAMED}`, // Sendt fra min iPhone
    `Lähetetty (?:laitteesta |sovelluksesta )?${NAMED}`, // Lähetetty iPhonesta
    `Wysłan[eoy] (?:z|ze|przy użyciu|za pomocą) ${NAMED}`, // Wysłane z iPhone'a
    `Odesláno (?:z|ze|pomocí) ${NAMED}`, // Odesláno z iPhonu
    `Odoslané (?:z|zo|pomocou) ${NAMED}`, // Odoslané z iPhonu
    `Trimis (?:de pe|din|cu) ${NAMED}`, // Trimis de pe iPhone-ul meu
    `Poslano (?:s|sa|iz|z) ${NAMED}`, // Poslano s mog iPhonea
    `Dikirim (?:dari|dengan) ${NAMED}`, // Dikirim dari iPhone saya
    `Gửi từ ${NAMED}`, // Gửi từ iPhone của tôi
    `Εστάλη από ${NAMED}`, // Εστάλη από το iPhone μου
    `(?:Отправлено|Надіслано|Изпратено) (?:с|со|из|з|із|от|через) ${NAMED}`, // Отправлено с iPhone
    `${NAMED} (?:küldve|gönderildi)`, // iPhone-ról küldve, iPhone'umdan gönderildi
    `נשלח מ${NAMED}`, // נשלח מה-iPhone שלי
    `أرسلت من ${NAMED}`, // أرسلت من الـ iPhone الخاص بي
    '.{1,40}から送信', // iPhoneから送信
    '.{1,40}에서 보냄', // iPhone에서 보냄
    '(?:发自|發自|來自|来自)我的.{1,40}', // 发自我的iPhone
    '(?:从|從)我的.{1,40}(?:发送|傳送|發送)', // 從我的 iPhone 傳送
  ].join('|')})$`,
  'i',
);
// K-9 Mail's "Sent from my Android device with K-9 Mail. Please excuse my brevity.": the apology
// after the footer.
const APOLOGY = /[.!]? (?:Please excuse (?:my|any) (?:brevity|typos?)|Excuse (?:my|the) brevity)[.!]?$/i;
// What a carrier adds after the device: "… on the Verizon Wireless 4G LTE network", "…, an AT&T 4G LTE
// smartphone", "… de Verizon Wireless 4G LTE".
const CARRIER =
  /(?:,? (?:on|over|via) (?:the )?\S+(?: \S+){0,5} network|, an? (?:AT&T|Verizon|Sprint|T-Mobile|U\.S\. Cellular)\b.{0,40}| de (?:Verizon|AT&T|Sprint|T-Mobile|Telcel|Movistar)\b.{0,40})[.!]?$/i;
// "Get Outlook for iOS" in any language: short, about Outlook and a phone's system.
const OUTLOOK_APP = /\bOutlook\b/;
const PHONE_SYSTEM = /\b(?:iOS|Android)\b/;
// A link's label: `[label](url)` as HTML conversion writes it, `label<url>` as Outlook's plain text
// does. Neither part can run over a bracket: each character is looked at a bounded number of times.
const LINK = /\[([^[\]]{0,200})\]\([^()\s]{0,2000}\)|<(?:https?|mailto):[^<>\s]{0,2000}>/g;

/** A footer some apps put in brackets without them: "<<sent by galaxy>>", "(Sent from mobile device)". */
function unbracketed(text: string): string {
  const open = /^[<([]{1,2}/.exec(text)?.[0].length;
  const close = /[>)\]]{1,2}$/.exec(text)?.[0].length;
  return open && close ? text.slice(open, text.length - close).trim() : text;
}

/** A footer that a phone's mail app adds to what is written on it ("Sent from my iPhone"). */
export function isMobileFooter(plain: string): boolean {
  if (plain.length > 4 * MAX_FOOTER_LENGTH) return false;
  let text = /[[<]/.test(plain) ? plain.replace(LINK, (_link, label?: string) => label ?? '').trim() : plain;
  text = unbracketed(text).replace(APOLOGY, '').replace(CARRIER, '');
  if (text.length > MAX_FOOTER_LENGTH) return false;
  return MOBILE_FOOTER.test(text) || (text.length <= 60 && OUTLOOK_APP.test(text) && PHONE_SYSTEM.test(text));
}

// What the notices that mail servers append below messages are about, in common languages.
const DISCLAIMER =
  /confidential|privileged|intended (?:solely |only )?for|intended recipient|disclaimer|vertraulich|confidentiel|confidencial|riservat|vertrouwelijk|konfidentiell|fortrolig|poufn|конфиденциальн|機密|保密/i;

/**
 * A legal notice that a mail server appended below the message ("This e-mail is confidential…"):
 * long, and about confidentiality from its start.
 */
export function isDisclaimer(text: string): boolean {
  return text.length >= 100 && DISCLAIMER.test(text.slice(0, 300));
}

// ---------------------------------------------------------------------------------------------
// Where a quoted or forwarded message begins.

// The words of "-----Original Message-----" and "---------- Forwarded message ---------", as
// Outlook, Gmail, Thunderbird, Samsung Mail and others write them in each language.
const ORIGINAL_MESSAGE =
  /original message|original-?nachricht|ursprüngliche nachricht|weitergeleitete nachricht|forwarded message|message d['’]origine|message transféré|message original|mensaje original|mensaje reenviado|messaggio originale|messaggio inoltrato|oorspronkelijk bericht|origineel bericht|doorgestuurd bericht|ursprungligt meddelande|vidarebefordrat meddelande|opprinnelig melding|videresendt melding|oprindelig meddelelse|videresendt meddelelse|mensagem original|mensagem encaminhada|mensagem reencaminhada|wiadomość oryginalna|oryginalna wiadomość|przekazana wiadomość|wiadomość przekazana|исходное сообщение|пересылаемое сообщение|пересланное сообщение|переадресованное сообщение|元のメッセージ|転送メッセージ|転送されたメッセージ|原始邮件|原始郵件|转发的邮件|轉寄的郵件|转发邮件|mail original|alkuperäinen viesti|välitetty viesti|eredeti üzenet|továbbított üzenet|původní zpráva|přeposlaná zpráva|orijinal mesaj|iletilen mesaj|iletilen ileti|αρχικό μήνυμα|προωθημένο μήνυμα|원본 메시지|전달된 메시지|전달된 메일|mesaj original|mesaj redirecționat|вихідне повідомлення|початкове повідомлення|пересланий лист|пересланое повідомлення|pôvodná správa|preposlaná správa|izvorna poruka|proslijeđena poruka|missatge original|missatge reenviat|pesan asli|pesan terusan|thư gốc|thư đã chuyển tiếp|הודעה מקורית|הודעה שהועברה|الرسالة الأصلية|الرسالة المعاد توجيهها|оригинално съобщение|препратено съобщение|originalus laiškas|persiųstas laiškas|algne sõnum|edasisaadetud sõnum/i;
const MAX_SEPARATOR_LENGTH = 100;

/**
 * "-----Original Message-----", "---------- Forwarded message ---------" and their translations:
 * a line between runs of dashes that names the message or its writer ("---- Bob wrote ----"), or
 * that a header block follows.
 */
export function isOriginalMessageLine(plain: string, nextPlain: string | undefined): boolean {
  if (plain.length > MAX_SEPARATOR_LENGTH || !/^-{2,}[^-]/.test(plain) || !/[^-]-{2,}$/.test(plain)) return false;
  return (
    ORIGINAL_MESSAGE.test(plain) || ATTRIBUTION_VERB.test(plain) || (nextPlain !== undefined && headerKind(nextPlain) === 'from')
  );
}

// Apple Mail's "Begin forwarded message:" in its languages, lower case, without the colon.
const FORWARD_INTROS = new Set([
  'begin forwarded message',
  'début du message réexpédié',
  'début du message transféré',
  'anfang der weitergeleiteten nachricht',
  'inicio del mensaje reenviado',
  'comienzo del mensaje reenviado',
  'inizio messaggio inoltrato',
  'begin doorgestuurd bericht',
  'início da mensagem reencaminhada',
  'início da mensagem encaminhada',
  'vidarebefordrat brev',
  'vidarebefordrat meddelande',
  'videresendt melding',
  'start på videresendt besked',
  'videresendt besked',
  'początek przekazywanej wiadomości',
  'начало переадресованного сообщения',
  'начало пересылаемого сообщения',
  '転送されたメッセージ',
  '以下是转发的邮件',
  '以下为转发的邮件',
  '开始转发的邮件',
  '轉寄的郵件',
  '전달된 메시지',
  'välitetty viesti alkaa',
  'začátek přeposílané zprávy',
  'továbbított levél kezdete',
  'inici del missatge reenviat',
  'початок пересланого листа',
]);

/** Apple Mail's "Begin forwarded message:" and its translations. */
export function isForwardIntro(plain: string): boolean {
  if (plain.length > MAX_SEPARATOR_LENGTH || !endsWithColon(plain)) return false;
  return FORWARD_INTROS.has(plain.replace(/\s*[:：]$/, '').toLowerCase());
}

export type HeaderKind = 'from' | 'sent' | 'date' | 'to' | 'cc' | 'subject';

// The field names of the header blocks Outlook, Gmail's forwards, Apple Mail, Yahoo and others
// write above a quoted or forwarded message, in the languages of their users, lower case.
const HEADER_NAMES: Readonly<Record<HeaderKind, string>> = {
  from: 'from|von|absender|de|de la|expéditeur|da|mittente|van|afzender|från|avsändare|fra|afsender|od|nadawca|от|від|відправник|发件人|寄件者|寄件人|差出人|送信者|remetente|remitente|lähettäjä|feladó|kimden|보낸 사람|šalje|από|từ|dari|מאת|من|nuo|saatja',
  sent: 'sent|gesendet|envoyé|envoyé le|enviado|enviada|enviado el|enviada em|enviado em|enviat|inviato|verzonden|verstuurd|skickat|sendt|wysłano|wysłane|data wysłania|отправлено|надіслано|изпратено|发送时间|寄件日期|送信日時|lähetetty|elküldve|gönderildi|odesláno|odoslané|trimis|poslano|στάλθηκε|đã gửi|dikirim|נשלח|تم الإرسال|išsiųsta|saadetud|보낸 날짜',
  date: 'date|datum|dato|fecha|data|дата|日期|日付|päivämäärä|dátum|tarih|날짜',
  to: 'to|an|à|a|para|per a|aan|till|til|do|кому|收件人|收件者|宛先|vastaanottaja|címzett|kime|komu|adresat|către|prima|προς|tới|kepada|אל|إلى|kam|adressaat|받는 사람',
  cc: 'cc|kopie|copie|kopia|копия|抄送|副本|kopio|másolat|bilgi|참조',
  subject:
    'subject|betreff|objet|asunto|oggetto|onderwerp|ämne|emne|temat|tema|тема|относно|主题|主旨|件名|assunto|aihe|tárgy|konu|předmět|predmet|subiect|θέμα|chủ đề|perihal|נושא|الموضوع|teema|제목',
};
const HEADER_KINDS = new Map<string, HeaderKind>(
  Object.entries(HEADER_NAMES).flatMap(([kind, names]) =>
    names.split('|').map((name): [string, HeaderKind] => [name, kind as HeaderKind]),
  ),
);
// A field name (letters, spaces, a hyphen), an optional space (French puts one) and a colon, then
// a space (none after a full-width colon).
const HEADER_FIELD = /^(\p{L}[\p{L} -]{0,20}?)\s?(?::(?:\s|$)|：)/u;
/** A header block has no more lines than this; a longer run of header lines is looked at up to it. */
export const HEADER_BLOCK_LINES = 8;

/** The kind of header field a line starts, if it does ("From: Bob", "Envoyé : mardi", "发件人: Bob"). */
export function headerKind(plain: string): HeaderKind | undefined {
  // Asked of every line: most have no colon, and the Unicode pattern costs more than the search.
  if (!plain.includes(':') && !plain.includes('：')) return undefined;
  const name = HEADER_FIELD.exec(plain)?.[1];
  return name === undefined ? undefined : HEADER_KINDS.get(name.toLowerCase());
}

/**
 * A block of header lines above a quoted or forwarded message, starting at line `i`: at least
 * three fields in a row, among them the sender and the subject or the time it was sent (what
 * tells it from, say, a trip's "From: Berlin / To: Paris / Date: Monday").
 */
export function isHeaderBlock(plain: readonly string[], i: number): boolean {
  if (headerKind(plain[i]!) === undefined) return false;
  const kinds = new Set<HeaderKind>();
  for (let j = i; j < plain.length && j < i + HEADER_BLOCK_LINES; j++) {
    const kind = headerKind(plain[j]!);
    // A field wrapped over two lines ("From: Bob [mailto:" / "bob@example.com]") goes on.
    if (kind === undefined && (plain[j] === '' || headerKind(plain[j + 1] ?? '') === undefined)) break;
    if (kind !== undefined) kinds.add(kind);
  }
  return kinds.size >= 3 && kinds.has('from') && (kinds.has('subject') || kinds.has('sent'));
}

// ---------------------------------------------------------------------------------------------
// Attributions: "On <date>, <someone> wrote:" and its translations.

// How an attribution begins, in the languages that start it with a word (Horde's "Quoting Bob <b@x>:").
const ATTRIBUTION_LEAD = /^(?:On|Am|Le|El|Op|Il|In data|Em|Den|Dne|Dnia|På|W dniu|În|Στις|Pada|Vào|Quoting|Zitat von|Citando)\s/i;
// The verb that ends it (or stands before the sender's name: "Am … schrieb Bob <b@x>:"). Not \b:
// it knows only ASCII letters.
const ATTRIBUTION_VERB =
  /(?<![\p{L}])(?:wrote|writes|quoting|schrieb|geschrieben|zitat von|a écrit|escribió|schreef|geschreven|ha scritto|escreveu|citando|skrev|pisze|napisał(?:\(a\)|a)?|napisana|napisao|napisala|napísal(?:\(a\)|a)?|написал(?:\(а\)|а)?|написав(?:\(ла\)|ла)?|написа|пишет|пише|kirjoitti|kirjutas|írta|napsal(?:\(a\)|a)?|a scris|va escriure|rašė|rakstīja|skrifaði|geskryf|ysgrifennodd|menulis|yazdı|đã viết|έγραψε|כתב|كتب|نوشت)(?![\p{L}])|書きました|のメール|のメッセージ|写道|寫道|작성/iu;
// The verb as the end of an attribution, before its colon.
const ATTRIBUTION_VERB_COLON = new RegExp(`(?:${ATTRIBUTION_VERB.source})\\s?[:：]`, 'iu');
// The verb as the end of an attribution that has no colon ("On <date> Bob <b@x> wrote"), tried on
// the end of the line only (the verbs are shorter).
const ATTRIBUTION_VERB_END = new RegExp(`(?:${ATTRIBUTION_VERB.source})$`, 'iu');
const endsWithVerb = (text: string) => ATTRIBUTION_VERB_END.test(text.slice(-32));
// A time (10:02, 10.02, 10h02): what attributions that have no verb still carry.
const ATTRIBUTION_TIME = /\d{1,2}[:.h]\d{2}/;
// A year, and a date written in digits at the start ("2016-03-03", "30.09.2017", "2013/10/2").
const YEAR = /(?:^|\D)(?:19|20)\d\d(?:\D|$)/;
const LEADING_DATE = /^\d{1,4}[-./]\d{1,2}[-./]\d{1,4}(?:\D|$)/;
// The sender's address in brackets, then the colon: how attributions without a verb end. Tried
// from the last bracket only.
const ADDRESS_COLON = /^[<(][^<>()\s@]+@[^<>()\s]+[>)]\s?[:：]$/;
const endsWithAddress = (text: string) =>
  ADDRESS_COLON.test(text.slice(Math.max(text.lastIndexOf('<'), text.lastIndexOf('('), 0)));
/** No attribution is longer: longer lines are not tried. */
export const MAX_ATTRIBUTION_LENGTH = 500;

/**
 * An attribution that needs no quote after it to be one ("On 5 Mar 2024, Bob wrote:" and its
 * translations): it ends with a colon, has the verb, and a date or the sender's address ("On
 * Monday I wrote:" may open a list); or it ends with the verb without a colon, and then starts
 * as attributions do and names the time and the address ("On Wed, 14 Nov 2018 08:14 Bob <b@x>
 * wrote"); or it has no verb and is Gmail's "<date> <time>, <name> <address>:" ("30.09.2017,
 * 18.30, Bob <b@x>:", "ср, 30 апр. 2025 г. в 15:19, Bob <b@x>:"), which a sentence ending with a
 * colon does not look like.
 */
export function isAttribution(text: string): boolean {
  if (text.length > MAX_ATTRIBUTION_LENGTH) return false;
  if (!endsWithColon(text)) {
    return ATTRIBUTION_LEAD.test(text) && endsWithVerb(text) && text.includes('@') && ATTRIBUTION_TIME.test(text);
  }
  if (!ATTRIBUTION_VERB.test(text)) return endsWithAddress(text) && ATTRIBUTION_TIME.test(text) && YEAR.test(text);
  return /\d/.test(text) || text.includes('@');
}

/**
 * A line that starts with an attribution and goes on with the quote, as Yahoo's app flattens
 * them: "On Tue, Mar 5, 2024 at 10:02, Bob<bob@example.com> wrote:   Lunch?".
 */
export function startsWithAttribution(plain: string): boolean {
  if (!ATTRIBUTION_LEAD.test(plain)) return false;
  const verb = ATTRIBUTION_VERB_COLON.exec(plain.slice(0, MAX_ATTRIBUTION_LENGTH));
  const end = verb === null ? plain.length : verb.index + verb[0].length;
  return end < plain.length && isAttribution(plain.slice(0, end));
}

/**
 * The line before a quote that introduces it: ending with a colon and naming a time, an address
 * or the verb of an attribution ("2024年3月5日(火) 10:02 Bob <b@x>:", "вт, 5 мар. 2024 г. в 10:02,
 * Bob <b@x>:"). "Here are the 2024 numbers:" introduces a quote too, but is the writer's own text.
 * Without a colon: a date and the sender ("2012/4/2 Bob <bob@example.com>", "2016-03-03 17:21
 * GMT+01:00 Some One"), or an attribution that lost its colon ("On 9 Jan 2014, Bob wrote").
 */
export function introducesQuote(text: string): boolean {
  if (text.length > MAX_ATTRIBUTION_LENGTH) return false;
  if (!endsWithColon(text)) {
    if (ATTRIBUTION_LEAD.test(text) && endsWithVerb(text)) return /\d/.test(text) || text.includes('@');
    if (!/^\d/.test(text)) return false;
    const date = LEADING_DATE.exec(text);
    return /<[^<>\s@]+@[^<>\s]+>$/.test(text) || (date !== null && ATTRIBUTION_TIME.test(text.slice(date[0].length)));
  }
  return ATTRIBUTION_VERB.test(text) || ATTRIBUTION_TIME.test(text) || text.includes('@');
}

/** A line that starts as attributions do: with their leading word, or with a date. */
export function opensAttribution(plain: string): boolean {
  return ATTRIBUTION_LEAD.test(plain) || /^\d/.test(plain);
}

/**
 * A line that starts an attribution of its own, not the rest of one wrapped above: with the
 * leading word, or with a date ("2013/10/2", "2024年3月5日"), not just any digit ("416ffd…@x>").
 */
export function leadsAttribution(plain: string): boolean {
  return ATTRIBUTION_LEAD.test(plain) || LEADING_DATE.test(plain) || /^\d{4}年/.test(plain);
}

/**
 * A line with the sender's address and the verb of an attribution, which Gmail writes first in
 * some languages and may wrap after ("Bob <bob@example.com> schrieb am So., 23." / "Juni 2024,
 * 21:08:").
 */
export function namesWriter(plain: string): boolean {
  return plain.includes('@') && ATTRIBUTION_VERB.test(plain);
}

/**
 * A line that may be the first part of an attribution that a plain-text writer wrapped: long
 * (wrapped near the line width) and not the end of a sentence.
 */
export function isWrapped(plain: string): boolean {
  return plain.length >= 40 && !/[.!?。！？]$/.test(plain);
}
