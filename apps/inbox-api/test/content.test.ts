import { cleanContent, preview, renderMarkdown } from '../src/messages/content/index.js';
import {
  headerKind,
  introducesQuote,
  isAttribution,
  isDisclaimer,
  isEmptyQuoteLine,
  isForwardIntro,
  isHeaderBlock,
  isMobileFooter,
  isOriginalMessageLine,
  isQuoteLine,
  isRule,
  isSignatureDelimiter,
  isSignatureRule,
  isWrapped,
  leadsAttribution,
  namesWriter,
  opensAttribution,
  plainLine,
  startsWithAttribution,
} from '../src/messages/content/reply-lines.js';

// Bodies as the mail programs write them (trimmed to what the rules look at).
const GMAIL_REPLY =
  '<div dir="ltr">Thanks Bob, Thursday works.<div><br></div><div>Ada</div></div><br>' +
  '<div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Tue, Mar 5, 2024 at 10:02 AM Bob Smith &lt;' +
  '<a href="mailto:bob@example.com">bob@example.com</a>&gt; wrote:<br></div>' +
  '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">' +
  '<div dir="ltr">Can we meet on Thursday?</div></blockquote></div>';

const GMAIL_SIGNATURE =
  '<div dir="ltr">Report attached.<br clear="all"><div><br></div><span class="gmail_signature_prefix">-- </span><br>' +
  '<div dir="ltr" class="gmail_signature" data-smartmail="gmail_signature">Ada Lovelace<br>Analytical Engines Ltd</div></div>';

const OUTLOOK_DESKTOP =
  '<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">' +
  '<style><!-- p.MsoNormal {margin:0cm;} --></style></head><body lang="EN-US"><div class="WordSection1">' +
  '<p class="MsoNormal">Hi Ada,<o:p></o:p></p><p class="MsoNormal">The invoice is attached.<o:p></o:p></p>' +
  '<p class="MsoNormal"><o:p>&nbsp;</o:p></p><p class="MsoNormal">Regards,<br>Bob<o:p></o:p></p>' +
  '<div><div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm"><p class="MsoNormal">' +
  '<b>From:</b> Ada Lovelace &lt;ada@example.com&gt; <br><b>Sent:</b> Tuesday, March 5, 2024 10:15 AM<br>' +
  '<b>To:</b> Bob Smith &lt;bob@example.com&gt;<br><b>Subject:</b> Invoice<o:p></o:p></p></div></div>' +
  '<p class="MsoNormal">Could you send the invoice?<o:p></o:p></p></div></body></html>';

const OUTLOOK_WEB =
  '<html><head><style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} </style></head><body dir="ltr">' +
  '<div class="elementToProof" style="font-family: Aptos;">Sounds good, see you then.</div><div id="appendonsend"></div>' +
  '<hr style="display:inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif">' +
  '<b>From:</b> Bob<br><b>Sent:</b> Tuesday<br><b>To:</b> Ada<br><b>Subject:</b> Lunch</font><div>&nbsp;</div></div>' +
  '<div>Lunch at noon?</div></body></html>';

const APPLE_MAIL =
  '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head>' +
  '<body style="overflow-wrap: break-word; -webkit-nbsp-mode: space; line-break: after-white-space;">' +
  'Yes, I’ll bring the slides.<br id="lineBreakAtBeginningOfMessage"><div><br><blockquote type="cite">' +
  '<div>On 5 Mar 2024, at 10:20, Bob Smith &lt;bob@example.com&gt; wrote:</div><br class="Apple-interchange-newline">' +
  '<div><div>Can you bring the slides?</div></div></blockquote></div><br></body></html>';

const THUNDERBIRD =
  '<p>Agreed.</p><div class="moz-cite-prefix">On 05.03.24 10:00, Bob wrote:<br></div>' +
  '<blockquote type="cite" cite="mid:1@example.com">Shall we ship?</blockquote>' +
  '<pre class="moz-signature" cols="72">-- \nAda</pre>';

const NESTED_HTML_QUOTES =
  '<p>Final answer.</p><blockquote type="cite"><p>Second message</p><blockquote type="cite"><p>First message</p></blockquote></blockquote>';

const NEWSLETTER =
  '<!DOCTYPE html><html><head><title>Weekly</title><style>.x{color:red}</style>' +
  '<script>window.track()</script></head><body><!-- campaign 42 -->' +
  '<span style="display: none; max-height:0; overflow:hidden">Preheader text you never see</span>' +
  '<div hidden>Also hidden</div><h1>Weekly news</h1><p>Read <a href="https://example.com/post">the post</a>.</p>' +
  '<img src="https://t.example.com/open.gif" width="1" height="1" alt="">' +
  '<img src="https://t.example.com/o.gif" style="width: 1px; height: 1px; border: 0">' +
  '<img src="https://t.example.com/v.gif" style="visibility:hidden">' +
  '<img src="https://example.com/chart.png" alt="Chart" width="600"></body></html>';

const PLAIN_GMAIL =
  'Thanks, that works.\n\nOn Tue, Mar 5, 2024 at 10:02 AM Bob Smith <bob@example.com>\nwrote:\n\n> Can we meet on Thursday?\n>\n';

const PLAIN_OUTLOOK =
  'Done, thanks.\r\n\r\n________________________________\r\nFrom: Bob Smith <bob@example.com>\r\n' +
  'Sent: Tuesday, March 5, 2024 10:15 AM\r\nTo: Ada Lovelace <ada@example.com>\r\nSubject: Report\r\n\r\nPlease finish the report.\r\n';

describe('cleanContent', () => {
  it.each([
    ['Gmail: the gmail_quote block with its attribution', { html: GMAIL_REPLY }, 'Thanks Bob, Thursday works.\n\nAda'],
    ['Gmail: the signature block and its "-- " prefix', { html: GMAIL_SIGNATURE }, 'Report attached.'],
    [
      'Outlook desktop: the From/Sent/To/Subject header block and what follows',
      { html: OUTLOOK_DESKTOP },
      'Hi Ada,\nThe invoice is attached.\n\nRegards,\nBob',
    ],
    ['Outlook on the web: #appendonsend, the rule and #divRplyFwdMsg', { html: OUTLOOK_WEB }, 'Sounds good, see you then.'],
    ['Apple Mail: blockquote type=cite', { html: APPLE_MAIL }, 'Yes, I’ll bring the slides.'],
    ['Thunderbird: cite prefix, cited blockquote and signature', { html: THUNDERBIRD }, 'Agreed.'],
    ['nested cited blockquotes', { html: NESTED_HTML_QUOTES }, 'Final answer.'],
    [
      'head, style, script, comments, hidden parts and tracking pixels',
      { html: NEWSLETTER },
      '# Weekly news\n\nRead [the post](https://example.com/post).\n\n![Chart](https://example.com/chart.png)',
    ],
    [
      'layout tables, keeping data tables',
      {
        html:
          '<table role="presentation"><tr><td><h1>News</h1><p>Para one</p></td></tr><tr><td><p>Para two</p></td></tr></table>' +
          '<table><tr><th>Item</th><th>Price</th></tr><tr><td>Tea</td><td>3</td></tr></table>',
      },
      '# News\n\nPara one\n\nPara two\n\n| Item | Price |\n| ---- | ----- |\n| Tea  | 3     |',
    ],
    [
      'empty paragraphs, and paragraphs that are lines (no margin, MsoNormal)',
      {
        html:
          '<p></p>\n<p></p><p>Hi Ada,</p>\n<p></p><p style="margin:0">one line</p><p style="margin-top:0;margin-bottom:0">another</p>' +
          '<p class="x MsoNormal">third</p><p></p><p>Bye</p>',
      },
      'Hi Ada,\n\none line\nanother\nthird\n\nBye',
    ],
    [
      'elements without attributes beside ones with: images without a source and hidden elements left out',
      {
        html: '<div><p id="a"></p><img src="https://example.com/a.png" alt="A"><img alt="none"><p hidden>gone</p><p>kept</p></div>',
      },
      '![A](https://example.com/a.png)\n\nkept',
    ],
    [
      'plain text: lines with nothing to escape kept, tags and unsafe links escaped outside fences',
      { text: 'a\nb <c>\nd & e\n[x](javascript:alert(1))\n```\n<b>\n```\nplain' },
      'a\nb \\<c>\nd & e\n[x\\](javascript:alert(1))\n```\n<b>\n```\nplain',
    ],
    ['plain text: a wrapped "On ... wrote:" and the > lines', { text: PLAIN_GMAIL }, 'Thanks, that works.'],
    ['plain text: Outlook separator and header block, CRLF line ends', { text: PLAIN_OUTLOOK }, 'Done, thanks.'],
    [
      'plain text: the "-- " signature',
      { text: 'See you tomorrow.\n\n-- \nAda Lovelace\nAnalytical Engines Ltd' },
      'See you tomorrow.',
    ],
    ['plain text: a signature line whose trailing space was stripped', { text: 'See you.\n--\nAda' }, 'See you.'],
    [
      'plain text: -----Original Message-----',
      { text: 'Approved.\n\n-----Original Message-----\nFrom: Bob\nPlease approve.' },
      'Approved.',
    ],
    [
      'plain text: interleaved replies keep the new lines and the quotes they answer',
      { text: '> Can you make Thursday?\nYes.\n> And bring the slides?\nSure.' },
      '> Can you make Thursday?\n\nYes.\n\n> And bring the slides?\n\nSure.',
    ],
    [
      'plain text: a reply below the quote it answers is the reply alone',
      { text: 'On Tue, Bob wrote:\n> Can you make Thursday?\n\nYes.' },
      'Yes.',
    ],
    ['plain text: nested quotes', { text: 'Reply\n\nOn Mon, Bob wrote:\n> Second\n>\n>> On Sun, Ada wrote:\n>> First' }, 'Reply'],
    [
      'plain text: German attribution',
      { text: 'Passt.\n\nAm 05.03.2024 um 10:02 schrieb Bob Smith <bob@example.com>:\n> Passt Donnerstag?' },
      'Passt.',
    ],
    [
      'plain text: French attribution',
      { text: 'D’accord.\n\nLe mar. 5 mars 2024 à 10:02, Bob <bob@example.com> a écrit :\n> Jeudi ?' },
      'D’accord.',
    ],
    [
      'plain text: "Sent from my iPhone" after the quote is gone',
      { text: 'On my way.\n\nSent from my iPhone\n\n> Where are you?' },
      'On my way.',
    ],
    [
      'code fences are content, whatever their lines look like',
      { text: 'Run:\n```\n> npm test\n-- \n```\nDone.' },
      'Run:\n```\n> npm test\n-- \n```\nDone.',
    ],
    [
      'a sentence that starts with "On" is not an attribution',
      { text: 'On Monday we ship.\nThe team wrote: nothing yet.' },
      'On Monday we ship.\nThe team wrote: nothing yet.',
    ],
    [
      'plain text: a bare date line above the quote (Gmail’s old form)',
      { text: 'Yes.\n\n2016-03-03 17:21 GMT+01:00 Some One\n\n> Can you?\n' },
      'Yes.',
    ],
    [
      'plain text: Gmail’s "<date>, <name> <address>:" with no verb and no quote marks',
      { text: 'Da.\n\nср, 30 апр. 2025 г. в 15:19, John Doe <doe@example.com>:\n\nпривет' },
      'Da.',
    ],
    [
      'plain text: an attribution that lost its colon',
      { text: 'Friday.\n\nOn Wed, 14 Nov 2018 08:14:43 -0200 John Doe <john@doe.com> wrote\n\nWhen are you available?' },
      'Friday.',
    ],
    [
      'plain text: an attribution right below the last line, with no blank line between',
      { text: 'Lorem\nDen 14 september, 2015 02:23:18, Valentino Rudy (valentino@rudy.be) skrev:\n\nVeniam.' },
      'Lorem',
    ],
    [
      'plain text: Gmail’s German attribution wrapped after the date',
      { text: 'Ja.\n\nBob Müller <bob@example.de> schrieb am So., 23.\nJuni 2024, 21:08:\n\n> Passt?' },
      'Ja.',
    ],
    [
      'plain text: a quoted line that the phone wrapped, its rest without markers',
      {
        text:
          'Ok.\n\nOn Sep 21, 2016 3:18 PM, "Bob" <bob@example.com> wrote:\n> Pitchfork occupy vegan pabst hammock. Wayfarers etsy pok pok, kale chips\n' +
          'brooklyn four dollar toast street art.\n> The end\n',
      },
      'Ok.',
    ],
    [
      'plain text: an answer right below a quote line is not taken for the rest of it',
      { text: 'Top\n\n> Can we meet at the usual place on Thursday after the board meeting\nyes, at four.\n> Bob' },
      'Top\n\n> Can we meet at the usual place on Thursday after the board meeting\n\nyes, at four.',
    ],
    [
      'plain text: a mailing list’s footer below a rule',
      {
        text: 'Hello all,\n\nIs it down?\n\n-Ada\n\n\n_______________________________________________\nriak-users mailing list\nriak-users@lists.example.com\nhttp://lists.example.com/mailman/listinfo/riak-users\n',
      },
      'Hello all,\n\nIs it down?\n\n-Ada',
    ],
    [
      'plain text: a signature below a rule of dashes, above the quoted message',
      {
        text: '好的。\n\n——————————\n\n小满\n活动协调人\n\n雨州 <yuzhou@example.com> 在 2026年2月28日 周六 19:47 写道：\n\n大家好',
      },
      '好的。',
    ],
    [
      'plain text: the header line below Outlook’s rule, with fewer fields than a block',
      { text: 'Noted.\n\n________________________________\nFrom: Bob <bob@example.com>\n\nPlease note.' },
      'Noted.',
    ],
    [
      'lines that end with a colon are the writer’s: a greeting, a list’s title, a time',
      {
        text: '安安：\n我这边没有别的补充了。\n\nHere are the numbers:\n\n- Q1: 12\n- Q2: 14\n\nAgenda for 10:30:\nReview with bob@example.com:\nDone.',
      },
      '安安：\n我这边没有别的补充了。\n\nHere are the numbers:\n\n- Q1: 12\n- Q2: 14\n\nAgenda for 10:30:\nReview with bob@example.com:\nDone.',
    ],
    [
      'a Markdown rule and what follows it are the writer’s',
      { text: 'Plan:\n\n---\nStep 1\nStep 2' },
      'Plan:\n\n---\nStep 1\nStep 2',
    ],
    [
      'a mobile footer that text goes on after is the writer’s',
      { text: 'The app adds\nSent from my iPhone\nbelow each mail.' },
      'The app adds\nSent from my iPhone\nbelow each mail.',
    ],
    [
      'K-9 Mail’s footer and its apology at the end',
      { text: 'Merged.\n-- \nSent from my Android device with K-9 Mail. Please excuse my brevity.' },
      'Merged.',
    ],
    [
      'HTML: an attribution in Gmail’s quote div with no blockquote',
      {
        html: 'Reply<div class="gmail_quote">On 11-Apr-2011, at 6:54 PM, Bob &lt;bob@example.com&gt; wrote:<div>Test</div></div>',
      },
      'Reply',
    ],
    [
      'HTML: the sender’s header line below a rule',
      { html: 'Reply<div><hr><div><b>From: bob@example.com</b> <b>Date: Thu, 24 Mar 2016</b></div><div>Quoted</div></div>' },
      'Reply',
    ],
    [
      'HTML: a mobile footer in its own div above the quote',
      {
        html:
          '<div dir="auto">Ja.</div><div dir="auto"><br></div><div dir="auto">Von meinem Mobilgerät gesendet</div>' +
          '<blockquote type="cite">Am 05.03.2024 um 10:02 schrieb Bob:<br>Passt?</blockquote>',
      },
      'Ja.',
    ],
  ])('handles %s', (_rule, body, expected) => {
    expect(cleanContent(body)).toBe(expected);
  });

  it('prefers the HTML body, and falls back to the text when the HTML has nothing to say', () => {
    expect(cleanContent({ html: '<p>From HTML</p>', text: 'From text' })).toBe('From HTML');
    expect(cleanContent({ html: '<img src="https://t.example.com/p.gif" width="1" height="1">', text: 'From text' })).toBe(
      'From text',
    );
    expect(cleanContent({ html: '  ', text: 'From text' })).toBe('From text');
  });

  it.each([
    ['no body at all', {}],
    ['empty bodies', { html: '', text: '' }],
    ['whitespace only', { html: '<div> &nbsp; </div>', text: ' \n\t ' }],
  ])('answers an empty string for %s', (_case, body) => {
    expect(cleanContent(body)).toBe('');
  });

  it('keeps a message that is only a footer or a signature rather than emptying it', () => {
    expect(cleanContent({ text: 'Sent from my iPhone' })).toBe('Sent from my iPhone');
    expect(cleanContent({ html: '<div>--&nbsp;</div><div>Ada</div>' })).toBe('\\--\nAda');
  });

  it('answers an empty string for a message that is only a chain of quotes: none of it is the sender’s', () => {
    expect(cleanContent({ text: 'On Tue, Bob wrote:\n> The numbers are in.' })).toBe('');
    expect(cleanContent({ text: 'On Tue, Bob wrote:\n> Fine.\n>\n>> On Mon, Ada wrote:\n>> Numbers?\n' })).toBe('');
    expect(
      cleanContent({ text: '\n\nOn Tue, Mar 5, 2024 at 10:02 AM Bob <bob@example.com> wrote:\n\nThe numbers are in.\n' }),
    ).toBe('');
    expect(cleanContent({ html: '<blockquote type="cite"><p>The numbers are in.</p></blockquote>' })).toBe('');
    expect(
      cleanContent({
        html: '<div class="gmail_quote"><div class="gmail_attr">On Tue, Bob &lt;b@x.com&gt; wrote:</div><blockquote>Numbers?</blockquote></div>',
        text: 'On Tue, Bob <b@x.com> wrote:\n> Numbers?\n',
      }),
    ).toBe('');
    expect(preview('')).toBe('');
  });

  it('shows text an HTML part wrote with ">" at its start, which no blockquote marks as a quote, when it is all there is', () => {
    expect(cleanContent({ html: '<p>&gt; not a quote, a line that starts with an arrow</p>' })).toBe(
      '\\> not a quote, a line that starts with an arrow',
    );
  });

  it('keeps the forwarded message of a forward without a comment, quoted or not', () => {
    const header = 'From: Bob <bob@example.com>\nDate: Tue, Mar 5, 2024\nSubject: Numbers\nTo: Ada <ada@example.com>';
    expect(cleanContent({ text: `---------- Forwarded message ---------\n${header}\n\nUp 12%.` })).toBe(
      `---------- Forwarded message ---------\n${header.replaceAll('<', '\\<')}\n\nUp 12%.`,
    );
    expect(
      cleanContent({ html: '<blockquote type="cite"><div>Begin forwarded message:</div><div>From: Bob</div>Up.</blockquote>' }),
    ).toBe('> Begin forwarded message:\n> From: Bob\n> Up.');
    expect(cleanContent({ text: '________________________________\nFrom: Bob <bob@example.com>\n\nUp 12%.' })).toBe(
      'From: Bob \\<bob@example.com>\n\nUp 12%.',
    );
  });

  it.each([
    [
      'script and event handlers',
      '<p>Hi <script>alert(1)</script><img src=x onerror="alert(1)"><svg onload="alert(1)"><text>x</text></svg>there</p>',
      'Hi there',
    ],
    [
      'javascript: and vbscript: links',
      '<p><a href="javascript:alert(1)">one</a> <a href=" JaVaScRiPt:alert(1)">two</a> <a href="vbscript:x">three</a></p>',
      'one two three',
    ],
    [
      'data: and cid: images',
      '<p>Logo<img src="data:image/png;base64,iVBORw0KGgo=" alt="x"><img src="cid:ii_123" alt="logo.png"></p>',
      'Logo',
    ],
    ['iframes and objects', '<p>Text</p><iframe src="https://evil.example.com"></iframe><object data="x.swf"></object>', 'Text'],
    [
      'malformed markup',
      '<div><p>Unclosed <b>bold <i>both</div><p>Next <table><td>cell',
      'Unclosed **bold _both_**\n\nNext cell',
    ],
  ])('is safe with %s', (_case, html, expected) => {
    const clean = cleanContent({ html });
    expect(clean).toBe(expected);
    expect(renderMarkdown(clean).html).not.toMatch(/<(script|img|svg|iframe|object)|javascript:/i);
  });

  it('keeps written text that looks like markup as text, and our renderer escapes it', () => {
    const clean = cleanContent({ html: '<p>Use &lt;script&gt; tags carefully</p>' });
    // Escaped, so that it stays text for any Markdown reader, also one that passes HTML through.
    expect(clean).toBe('Use \\<script> tags carefully');
    expect(renderMarkdown(clean).html).toBe('<p>Use &lt;script&gt; tags carefully</p>\n');
  });

  // Speed on such inputs is measured by bench/content.ts; here, that they come out right.
  it('cleans a 1 MB message', () => {
    const paragraph =
      '<p>Lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit, <a href="https://example.com">link</a>.</p>';
    const html = `${paragraph.repeat(Math.ceil(1_000_000 / paragraph.length))}<div class="gmail_quote"><blockquote>old</blockquote></div>`;
    const text = `${'A line of plain text that goes on for a while.\n'.repeat(21_000)}\nOn Tue, Bob wrote:\n> old`;
    const fromHtml = cleanContent({ html });
    const fromText = cleanContent({ text });
    expect(fromHtml).not.toContain('old');
    expect(fromHtml.startsWith('Lorem ipsum dolor sit amet, **consectetur** adipiscing elit, [link](https://example.com).')).toBe(
      true,
    );
    expect(fromText).not.toContain('Bob');
    expect(preview(fromText)).toMatch(/^A line of plain text/);
  });

  it('converts a 1 MB newsletter of nested layout tables', () => {
    const story =
      '<tr><td><table role="presentation"><tr><td><h2>Story</h2><p>Some <b>news</b> text.</p></td></tr></table></td></tr>';
    const html = `<table width="100%"><tbody>${story.repeat(Math.ceil(1_000_000 / story.length))}</tbody></table>`;
    const clean = cleanContent({ html });
    expect(clean.startsWith('## Story\n\nSome **news** text.\n\n## Story')).toBe(true);
  });

  // The worst shapes of the reply rules, 1 MB of each: what comes out (bench/content.ts times them).
  const megabyte = (unit: string) => unit.repeat(Math.ceil(1_000_000 / unit.length));
  it.each([
    ['lines that end with a colon', 'Notes of 2024-03-05, 10:30, the review:\n'],
    ['lines with a bracketed address and a colon', `(${'a'.repeat(400)} at 10:30 <bob@example.com>:\n`],
    ['mobile footers', 'Sent from my iPhone\n'],
  ])('keeps 1 MB of %s: none is a quote', (_shape, unit) => {
    const text = megabyte(unit);
    expect(cleanContent({ text })).toBe(text.trimEnd().replaceAll('<', '\\<'));
  });

  it.each([
    ['quote lines', '> Lunch?\n'],
    ['attributions and quotes', 'On Tue, Mar 5, 2024 at 10:02 AM Bob <bob@example.com> wrote:\n> Lunch?\n'],
    ['bare date lines and quotes', '2016-03-03 17:21 GMT+01:00 Some One\n> Lunch?\n'],
    ['wrapped quote lines and their rest', `> ${'word '.repeat(15)}\nand the rest of it\n`],
  ])('answers an empty string for 1 MB of %s', (_shape, unit) => {
    expect(cleanContent({ text: megabyte(unit) })).toBe('');
  });

  it('cuts only the last signature from 1 MB of rules and short lines', () => {
    const text = megabyte('——————————\nsig\n');
    expect(cleanContent({ text })).toBe(text.slice(0, -'\n——————————\nsig\n'.length));
  });

  it('keeps a 1 MB line that starts like an attribution', () => {
    expect(cleanContent({ text: `On ${'x'.repeat(1_000_000)}` })).toHaveLength(1_000_003);
  });
});

describe('reply line rules', () => {
  it('read lines without emphasis, escapes and invisible marks', () => {
    expect(plainLine('  **From:** Bob ')).toBe('From: Bob');
    expect(plainLine('\\-- ')).toBe('--');
    expect(plainLine('\u200e26\u200e June')).toBe('26 June');
  });

  it.each([
    ['> quoted', true],
    ['   > indented', true],
    ['\\> shown by the HTML', true],
    ['    > code', false],
    ['a > b', false],
  ])('isQuoteLine(%j) is %s', (line, expected) => expect(isQuoteLine(line)).toBe(expected));

  it.each([
    ['>', true],
    ['> >', true],
    ['\\>', true],
    ['> a', false],
  ])('isEmptyQuoteLine(%j) is %s', (line, expected) => expect(isEmptyQuoteLine(line)).toBe(expected));

  it.each([
    ['-- ', true],
    ['--', true],
    ['\\-- ', true],
    ['---', false],
    ['-- Ada', false],
    ['\\-\\*\\*\\*-', false],
  ])('isSignatureDelimiter(%j) is %s', (line, expected) => expect(isSignatureDelimiter(line)).toBe(expected));

  it.each([
    ['________________________________', true],
    ['\\_\\_\\_', true],
    ['---', true],
    ['* * *', true],
    ['--', false],
    ['-_-', false],
  ])('isRule(%j) is %s', (line, expected) => expect(isRule(line)).toBe(expected));

  it.each([
    ['_______________________________________________', true],
    ['\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_', true],
    ['——————————————————————————————', true],
    ['─────', true],
    ['_____', false],
    ['---', false],
    ['—', false],
    ['———— text', false],
  ])('isSignatureRule(%j) is %s', (line, expected) => expect(isSignatureRule(line)).toBe(expected));

  it.each([
    'Sent from my iPhone',
    'Sent from my Galaxy',
    'Sent with Spark',
    'Sent with Airmail',
    'Sent from my BlackBerry® wireless device',
    'Sent from my Verizon, Samsung Galaxy smartphone',
    'Sent from my Android device with K-9 Mail. Please excuse my brevity.',
    'Sent from my BlackBerry 10 smartphone on the Verizon Wireless 4G LTE network.',
    'Sent wirelessly from my BlackBerry device on the Bell network.',
    'Sent via the Samsung Galaxy S7, an AT&T 4G LTE smartphone',
    'Enviado desde mi dispositivo Samsung Galaxy de Verizon Wireless 4G LTE.',
    '<<sent by galaxy>>',
    '(Sent from mobile device)',
    'Sent from Mail for Windows 10',
    'Diese Nachricht wurde von meinem Android-Mobiltelefon mit K-9 Mail gesendet.',
    'Von meinem Mobilgerät gesendet',
    'Envoyé depuis mon iPhone',
    'Verzonden met BlackBerry',
    '發自我的 iPhone',
    '从我的iPhone发送',
    'Odesláno z iPhonu',
    'Lähetetty iPhonesta',
    'iPhone에서 보냄',
    'Gửi từ iPhone của tôi',
    'Enviat des del meu iPhone',
    'Trimis de pe iPhone-ul meu',
    'Надіслано з iPhone',
    'iPhone-ról küldve',
    "iPhone'umdan gönderildi",
    'Dikirim dari iPhone saya',
    'Poslano s mog iPhonea',
    'Εστάλη από το iPhone μου',
    'נשלח מה-iPhone שלי',
    'Sent from [Yahoo Mail on Android](https://go.onelink.me/107872968)',
    'Get Outlook for iOS<https://aka.ms/o0ukef>',
    'Get [Outlook for Android](https://aka.ms/AAb9ysg)',
    'Outlook für iOS beziehen',
    'Envoyé de mon iPhone',
    'Von meinem iPhone gesendet',
    'Enviado desde mi iPhone',
    'Enviado do meu iPhone',
    'Verstuurd vanaf mijn iPhone',
    'Inviato da iPhone',
    'Skickat från min iPhone',
    'Sendt fra min iPhone',
    'Wysłane z iPhone’a',
    'Отправлено с iPhone',
    'iPhoneから送信',
    '发自我的iPhone',
    '從我的 iPhone 傳送',
  ])('isMobileFooter(%j)', (line) => expect(isMobileFooter(line)).toBe(true));

  it.each([
    'Sent: Tuesday, March 5, 2024 10:02 AM',
    'Sent from my iPhone, so please forgive the typos in this long message about the quarterly numbers and the plan',
    'We moved the app to Outlook and iOS last year, and the migration of all the mailboxes went well.',
    'Thanks',
    'Sent from my desk, is much easier than my mobile phone.',
    'Sent from my desk, with a very old phone on a slow network of the office.',
    'I sent the draft of the plan to the team on the internal network.',
    'This email was sent from our automated system, not Sent from my iPad.',
    'Lähetetty: 5.3.2024 10:02',
  ])('not isMobileFooter(%j)', (line) => expect(isMobileFooter(line)).toBe(false));

  it.each([
    ['-----Original Message-----', undefined, true],
    ['----- Original Message -----', undefined, true],
    ['---------- Forwarded message ---------', undefined, true],
    ['-------- Weitergeleitete Nachricht --------', undefined, true],
    ["-----Message d'origine-----", undefined, true],
    ['-----Исходное сообщение-----', undefined, true],
    ['------------------ 原始邮件 ------------------', undefined, true],
    ['---- Bob wrote ----', undefined, true],
    ['------ Mensaxe orixinal ------', 'De: Bob <bob@example.com>', true],
    ['--- Details ---', 'Price: 12 EUR', false],
    ['-- Ada', undefined, false],
  ])('isOriginalMessageLine(%j, %j) is %s', (line, next, expected) => expect(isOriginalMessageLine(line, next)).toBe(expected));

  it.each([
    ['Begin forwarded message:', true],
    ['Début du message réexpédié :', true],
    ['Anfang der weitergeleiteten Nachricht:', true],
    ['Inicio del mensaje reenviado:', true],
    ['Begin forwarded message', false],
    ['Begin with the forwarded message:', false],
  ])('isForwardIntro(%j) is %s', (line, expected) => expect(isForwardIntro(line)).toBe(expected));

  it.each([
    ['From: Bob', 'from'],
    ['De : Bob', 'from'],
    ['Von: Bob', 'from'],
    ['От: Боб', 'from'],
    ['发件人：Bob', 'from'],
    ['Envoyé : mardi', 'sent'],
    ['Enviada em: terça-feira', 'sent'],
    ['送信日時: 2024年3月5日', 'sent'],
    ['Datum: 5.3.2024', 'date'],
    ['À : Ada', 'to'],
    ['Cc:', 'cc'],
    ['Betreff: Termin', 'subject'],
    ['Tема: x', undefined],
    ['Note: from Bob', undefined],
    ['From:Bob', undefined],
    ['From Bob', undefined],
    ['a', undefined],
  ])('headerKind(%j) is %s', (line, expected) => expect(headerKind(line)).toBe(expected));

  it.each([
    [['From: Bob <bob@example.com>', 'Sent: Tuesday', 'To: Ada', 'Subject: Lunch'], true],
    [['Date: Thu, 26 Jun 2014', 'Subject: Test', 'From: abc@example.com', 'To: alex@example.com'], true],
    [['От: Боб', 'Отправлено: четверг', 'Кому: Ада'], true],
    [['From: Bob [mailto:', 'bob@example.com]', 'Date: Wednesday', 'To: Ada', 'Subject: Hello'], true],
    [['From: Berlin', 'To: Paris', 'Date: Monday'], false],
    [['From: Bob', 'Sent: Tuesday'], false],
    [['Subject: Lunch', 'To: Ada', 'Sent: Tuesday'], false],
  ])('isHeaderBlock(%j) is %s', (lines, expected) => expect(isHeaderBlock(lines, 0)).toBe(expected));

  it.each([
    ['On Tue, Mar 5, 2024 at 10:02 AM Bob Smith <bob@example.com> wrote:', true],
    ['Am 05.03.2024 um 10:02 schrieb Bob Müller <bob@example.de>:', true],
    ['Le 5 mars 2024 à 10:02, Bob <bob@example.fr> a écrit :', true],
    ['El 5 mar 2024, a las 10:02, Bob escribió:', true],
    ['Il giorno mar 5 mar 2024 alle ore 10:02 Bob ha scritto:', true],
    ['W dniu 5.03.2024 o 10:02, Bob pisze:', true],
    ['5 марта 2024 г., в 10:02, Боб написал(а):', true],
    ['在 2024年3月5日，10:02，Bob 写道：', true],
    ['Wiadomość napisana przez Bob <bob@example.pl> w dniu 5.03.2024, o godz. 10:02:', true],
    ['вт, 5 бер. 2024 р. о 10:02 Bob <bob@example.ua> пише:', true],
    ['Bob <bob@example.ro> a scris în mar., 5 mar. 2024 la 10:02:', true],
    ['uto, 5. ožu 2024. u 10:02 Bob <bob@example.hr> napisao je:', true],
    ['Pada tanggal Sel, 5 Mar 2024 pukul 10.02 Bob <bob@example.id> menulis:', true],
    ['El dt., 5 de març 2024 a les 10:02, Bob (<bob@example.cat>) va escriure:', true],
    ['2024-03-05, an, 10:02 Bob <bob@example.lt> rašė:', true],
    ['Bob <bob@example.ee> kirjutas kuupäeval T, 5. märts 2024 kell 10:02:', true],
    ['2024/03/05 10:02、Bob <bob@example.jp> のメッセージ:', true],
    ['On Wed, 14 Nov 2018 08:14:43 -0200 John Doe <john@doe.com> wrote', true],
    ['ср, 30 апр. 2025 г. в 15:19, John Doe <doe@example.com>:', true],
    ['30.09.2017, 18.30, "John - Doe" <john@example.com>:', true],
    ['Wednesday, 17 November 2021, 3:32 PM +0300 from john@example.com <john@example.com>:', true],
    ['On Tue, Bob wrote:', false],
    ['On Monday I wrote:', false],
    ['On 5 March I wrote the report.', false],
    ['On 5 May we wrote', false],
    ['Meeting on 2024-03-05 at 10:00 with bob@example.com:', false],
    ['Send the 2024 report to <bob@example.com>:', false],
  ])('isAttribution(%j) is %s', (line, expected) => expect(isAttribution(line)).toBe(expected));

  it.each([
    ['On Tue, Mar 5, 2024 at 10:02, Bob Smith<bob@example.com> wrote:   Lunch?', true],
    ['Le 5 mars 2024 à 10:02, Bob <bob@example.fr> a écrit : Jeudi ?', true],
    ['On Tue, Mar 5, 2024 at 10:02, Bob Smith <bob@example.com> wrote:', false],
    ['On Monday Bob wrote: we ship.', false],
  ])('startsWithAttribution(%j) is %s', (line, expected) => expect(startsWithAttribution(line)).toBe(expected));

  it.each([
    ['On Tue, Bob wrote:', true],
    ['2024年3月5日(火) 10:02 Bob Tanaka <bob@example.jp>:', true],
    ['вт, 5 мар. 2024 г. в 10:02, Боб <bob@example.ru>:', true],
    ['26.06.2014, 14:41, "Alexander L" <abc@example.com>:', true],
    ['2013/4/15 Roman Tkachenko <romant@example.com>', true],
    ['2016-03-03 17:21 GMT+01:00 Some One', true],
    ['On 9 Jan 2014, at 2:47, George Plymale wrote', true],
    ['Here are the 2024 numbers:', false],
    ['As discussed:', false],
    ['Write to <bob@example.com>', false],
    ['2016-03-03 was a Thursday', false],
    ['On Monday we wrote', false],
  ])('introducesQuote(%j) is %s', (line, expected) => expect(introducesQuote(line)).toBe(expected));

  it.each([
    ['On Tue, Mar 5, 2024 at 10:02 AM', true],
    ['2013/10/2 Bob <bob@example.com>', true],
    ['2024年3月5日(火) 10:02 Bob', true],
    ['416ffd3258d4d2fa4c85cfa4c44e1721d66e3e8f4@example.com>', false],
    ['wrote:', false],
  ])('leadsAttribution(%j) is %s', (line, expected) => expect(leadsAttribution(line)).toBe(expected));

  it.each([
    ['Bob Müller <bob@example.de> schrieb am So., 23.', true],
    ['I wrote the report.', false],
    ['Write to bob@example.com.', false],
  ])('namesWriter(%j) is %s', (line, expected) => expect(namesWriter(line)).toBe(expected));

  it.each([
    ['On Tue, Mar 5, 2024 at 10:02 AM', true, false],
    ['02.04.2012 14:20 пользователь "bob@example.com" <', true, true],
    ['On Tue, Mar 5, 2024 at 10:02 AM Bob Smith <bob@example.com>', true, true],
    ['Hello', false, false],
    ['This is a whole sentence that ends where sentences end.', false, false],
  ])('opensAttribution(%j) is %s, isWrapped is %s', (line, opens, wrapped) => {
    expect(opensAttribution(line)).toBe(opens);
    expect(isWrapped(line)).toBe(wrapped);
  });

  it.each([
    [
      'CONFIDENTIALITY NOTICE: This e-mail message, including any attachments, is for the sole use of the intended recipient(s).',
      true,
    ],
    [
      'Diese E-Mail enthält vertrauliche Informationen und ist nur für den bestimmten Empfänger gedacht. Bitte löschen Sie sie.',
      true,
    ],
    ['Yes, it is confidential.', false],
    ['Sure, I will send the slides and the numbers tomorrow morning, once the team has looked at them.', false],
  ])('isDisclaimer(%j) is %s', (text, expected) => expect(isDisclaimer(text)).toBe(expected));
});

describe('renderMarkdown', () => {
  it.each([
    [
      'emphasis and paragraphs',
      '**Hi** _there_\n\nSecond',
      '<p><strong>Hi</strong> <em>there</em></p>\n<p>Second</p>\n',
      'Hi there\n\nSecond',
    ],
    ['single line breaks', 'Best,\nAda', '<p>Best,<br>\nAda</p>\n', 'Best,\nAda'],
    [
      'a link',
      'See [the docs](https://example.com/docs).',
      '<p>See <a href="https://example.com/docs">the docs</a>.</p>\n',
      'See the docs (https://example.com/docs).',
    ],
    [
      'a bare URL, linked once',
      'Go to https://example.com now',
      '<p>Go to <a href="https://example.com">https://example.com</a> now</p>\n',
      'Go to https://example.com now',
    ],
    [
      'raw HTML, escaped',
      'Hi <script>alert(1)</script><b>x</b>',
      '<p>Hi &lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;</p>\n',
      'Hi <script>alert(1)</script><b>x</b>',
    ],
    [
      'a javascript: link, left as text',
      '[click](javascript:alert(1))',
      '<p>[click](javascript:alert(1))</p>\n',
      '[click](javascript:alert(1))',
    ],
    [
      'a vbscript: link, left as text',
      '[click](vbscript:msgbox)',
      '<p>[click](vbscript:msgbox)</p>\n',
      '[click](vbscript:msgbox)',
    ],
    [
      'a heading and a fenced block',
      '# Plan\n\n```\nnpm test\n```',
      '<h1>Plan</h1>\n<pre><code>npm test\n</code></pre>\n',
      'Plan\n\nnpm test',
    ],
    [
      'lists, nested',
      'Agenda:\n\n- one\n- two\n  - two a\n\n3. three\n4. four',
      undefined,
      'Agenda:\n\n- one\n- two\n  - two a\n\n3. three\n4. four',
    ],
    [
      'a quote',
      '> quoted\n> more\n\nafter',
      '<blockquote>\n<p>quoted<br>\nmore</p>\n</blockquote>\n<p>after</p>\n',
      '> quoted\n> more\n\nafter',
    ],
    ['a table', '| a | b |\n|---|---|\n| 1 | 2 |', undefined, 'a | b\n1 | 2'],
    ['an image', '![Chart](https://example.com/c.png)', '<p><img src="https://example.com/c.png" alt="Chart"></p>\n', 'Chart'],
    ['an empty body', '', '', ''],
  ])('renders %s', (_case, source, html, text) => {
    const rendered = renderMarkdown(source);
    if (html !== undefined) expect(rendered.html).toBe(html);
    expect(rendered.text).toBe(text);
  });
});

describe('preview', () => {
  it.each([
    ['short text, as is', 'Thanks, see you Thursday.', 'Thanks, see you Thursday.'],
    [
      'Markdown markup, stripped',
      '# Weekly\n\n**Bold** and _em_ with [a link](https://example.com) and `code`.',
      'Weekly Bold and em with a link and code.',
    ],
    ['lists and quotes, flattened', '- one\n- two\n\n> quoted', 'one two quoted'],
    ['whitespace, collapsed', '  Hello\n\n\n   world \t again  ', 'Hello world again'],
    ['empty text', '', ''],
  ])('%s', (_case, source, expected) => {
    expect(preview(source)).toBe(expected);
  });

  it('cuts long text at a word, about 120 characters in, with an ellipsis', () => {
    const text = `${'alpha beta gamma delta, '.repeat(10)}end`;
    const short = preview(text);
    expect(short.endsWith('…')).toBe(true);
    expect(short.length).toBeLessThanOrEqual(121);
    expect(short.length).toBeGreaterThan(100);
    expect(text.startsWith(short.slice(0, -1))).toBe(true);
    expect(short).not.toMatch(/[,\s]…$/);
  });

  it('cuts a single endless word at 120 characters', () => {
    expect(preview('x'.repeat(500))).toBe(`${'x'.repeat(120)}…`);
  });
});
