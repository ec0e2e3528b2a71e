import { redactUrl } from '../src/index.js';

describe('redactUrl', () => {
  it.each([
    ['postgresql://app:s3cret@db:5432/inbox', 'postgresql://app:***@db:5432/inbox'],
    ['smtps://user:p%40ss@smtp.example.com:465', 'smtps://user:***@smtp.example.com:465'],
    ['redis://:s3cret@127.0.0.1:6379/0', 'redis://:***@127.0.0.1:6379/0'],
    ['postgresql://app@db/inbox', 'postgresql://app@db/inbox'],
    ['/v1/attachments/a1/content?token=s3cret&expires=1', '/v1/attachments/a1/content?token=%5Bredacted%5D&expires=1'],
    ['/api/v1/approval/expire?internal_token=s3cret', '/api/v1/approval/expire?internal_token=%5Bredacted%5D'],
    ['https://h/x?Signature=a&signature=b&q=1', 'https://h/x?Signature=%5Bredacted%5D&signature=%5Bredacted%5D&q=1'],
    ['/v1/messages?q=a%20b&limit=5', '/v1/messages?q=a%20b&limit=5'],
    ['mysql://admin:pw@db:3306/x and smtp://u:pw2@mail', 'mysql://admin:***@db:3306/x and smtp://u:***@mail'],
    ['not a url', 'not a url'],
  ])('%s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
