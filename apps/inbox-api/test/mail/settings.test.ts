import { z } from 'zod';
import { configProblems, documentSettings, loadConfig } from '@repo/config';
import { checkMailSettings, createMailTransport, mailSettings, type OutboundMail } from '../../src/adapters/mail/index.js';
import { replyMail } from './helpers.js';

const schema = z.object(mailSettings()).superRefine(checkMailSettings);

const problemsOf = (env: Record<string, string>) => configProblems(schema, env);

const noDelivery = { deliver: () => Promise.resolve(), resume: () => Promise.resolve('unknown' as const) };

describe('mail settings', () => {
  it('default to the local provider and the providers’ public API bases', () => {
    expect(loadConfig(schema, {})).toEqual({
      EMAIL_PROVIDER: 'local',
      MAILGUN_BASE_URL: 'https://api.mailgun.net',
      SENDGRID_BASE_URL: 'https://api.sendgrid.com',
    });
  });

  it.each([
    [{ EMAIL_PROVIDER: 'smtp' }, ['SMTP_URL is required when EMAIL_PROVIDER is smtp']],
    [
      { EMAIL_PROVIDER: 'mailgun' },
      ['MAILGUN_API_KEY is required when EMAIL_PROVIDER is mailgun', 'MAILGUN_DOMAIN is required when EMAIL_PROVIDER is mailgun'],
    ],
    [{ EMAIL_PROVIDER: 'mailgun', MAILGUN_API_KEY: 'k' }, ['MAILGUN_DOMAIN is required when EMAIL_PROVIDER is mailgun']],
    [{ EMAIL_PROVIDER: 'sendgrid' }, ['SENDGRID_API_KEY is required when EMAIL_PROVIDER is sendgrid']],
    [
      { EMAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1' },
      [
        'SES_ACCESS_KEY_ID is required when EMAIL_PROVIDER is ses',
        'SES_SECRET_ACCESS_KEY is required when EMAIL_PROVIDER is ses',
      ],
    ],
    [{ EMAIL_PROVIDER: 'postmark' }, ['EMAIL_PROVIDER must be one of local, smtp, mailgun, sendgrid, ses (got "postmark")']],
    [
      { EMAIL_PROVIDER: 'smtp', SMTP_URL: 'https://smtp.example.com' },
      ['SMTP_URL must be a smtp or smtps URL (got "https://smtp.example.com")'],
    ],
    [{ MAILGUN_BASE_URL: 'api.eu.mailgun.net' }, ['MAILGUN_BASE_URL must be a http or https URL (got "api.eu.mailgun.net")']],
  ])('name what the chosen provider lacks: %j', (env, problems) => {
    expect(problemsOf(env)).toEqual(problems);
  });

  it('accept each provider with its settings', () => {
    for (const env of [
      { EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtps://user:pass@smtp.example.com:465' },
      {
        EMAIL_PROVIDER: 'mailgun',
        MAILGUN_API_KEY: 'k',
        MAILGUN_DOMAIN: 'mg.example.com',
        MAILGUN_BASE_URL: 'https://api.eu.mailgun.net/',
      },
      { EMAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: 'SG.k' },
      { EMAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1', SES_ACCESS_KEY_ID: 'AKIA', SES_SECRET_ACCESS_KEY: 's' },
    ]) {
      expect(loadConfig(schema, env)).toMatchObject(
        env.MAILGUN_BASE_URL ? { ...env, MAILGUN_BASE_URL: 'https://api.eu.mailgun.net' } : env,
      );
    }
  });

  it('are documented, each of them', () => {
    const docs = documentSettings(schema);
    expect(docs.map((doc) => doc.name)).toEqual(Object.keys(mailSettings()));
    for (const doc of docs) expect(doc.description).not.toBe('');
  });
});

describe('createMailTransport', () => {
  it.each([
    [{ EMAIL_PROVIDER: 'local' }, 'local'],
    [{ EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtp://127.0.0.1:2525' }, 'smtp'],
    [{ EMAIL_PROVIDER: 'mailgun', MAILGUN_API_KEY: 'k', MAILGUN_DOMAIN: 'mg.example.com' }, 'mailgun'],
    [{ EMAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: 'k' }, 'sendgrid'],
    [{ EMAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1', SES_ACCESS_KEY_ID: 'a', SES_SECRET_ACCESS_KEY: 's' }, 'ses'],
  ])('builds the transport of %j', async (env, name) => {
    const transport = createMailTransport(loadConfig(schema, env), { localDelivery: noDelivery });
    expect(transport.name).toBe(name);
    await transport.close();
  });

  it('hands local mail to the delivery function, unchanged, and sends nothing out', async () => {
    const delivered: OutboundMail[] = [];
    const transport = createMailTransport(loadConfig(schema, {}), {
      localDelivery: {
        ...noDelivery,
        deliver: (mail) => {
          delivered.push(mail);
          return Promise.resolve();
        },
      },
    });
    const mail = replyMail();
    expect(await transport.send(mail)).toEqual({ messageId: mail.messageId });
    expect(delivered).toEqual([mail]);
  });

  it('passes a delivery failure on as it is', async () => {
    const transport = createMailTransport(loadConfig(schema, {}), {
      localDelivery: { ...noDelivery, deliver: () => Promise.reject(new Error('db down')) },
    });
    await expect(transport.send(replyMail())).rejects.toThrow('db down');
  });
});
