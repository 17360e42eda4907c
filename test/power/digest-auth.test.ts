// RFC 7616's own examples (section 3.9.1): the same request answered under
// SHA-256 and MD5, and the parser's refusals.
import test from 'ava';
import { digestAuthorization, parseDigestChallenge } from '../../lib/power/digest-auth.js';

const rfcRequest = {
  method: 'GET',
  uri: '/dir/index.html',
  username: 'Mufasa',
  password: 'Circle of Life',
  cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  nonceCount: 1,
} as const;

const rfcChallenge = (algorithm: string): string =>
  `Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=${algorithm}, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`;

test("RFC 7616 3.9.1: the SHA-256 example's response", (t) => {
  const challenge = parseDigestChallenge(rfcChallenge('SHA-256'));
  t.like(challenge, { realm: 'http-auth@example.org', algorithm: 'SHA-256', qopAuth: true });
  if (challenge === undefined) return;
  const header = digestAuthorization(challenge, rfcRequest);
  t.regex(header, /response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"/);
  t.regex(
    header,
    /^Digest username="Mufasa", realm="http-auth@example.org", uri="\/dir\/index.html", algorithm=SHA-256, /,
  );
  t.regex(header, /nc=00000001, cnonce="f2\/wE4q74E6zIJEtWaHKaf5wv\/H5QzzpXusqGemxURZJ", qop=auth/);
  t.regex(header, /opaque="FQhe\/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"$/);
});

test("RFC 7616 3.9.1: the MD5 example's response", (t) => {
  const challenge = parseDigestChallenge(rfcChallenge('MD5'));
  if (challenge === undefined) return t.fail('not parsed');
  t.regex(digestAuthorization(challenge, rfcRequest), /response="8ca523f5e9506fed4657c9700eebdbec"/);
});

test('a challenge this client cannot answer is undefined', (t) => {
  t.is(parseDigestChallenge(null), undefined);
  t.is(parseDigestChallenge('Basic realm="plug"'), undefined);
  t.is(parseDigestChallenge('Digest nonce="1"'), undefined, 'no realm');
  t.is(parseDigestChallenge('Digest realm="r", nonce="1", algorithm=SHA-512-256'), undefined);
  t.is(parseDigestChallenge('Digest realm="r", nonce="1", qop="auth-int"'), undefined);
  t.like(parseDigestChallenge('Digest realm="a \\"quoted\\" realm", nonce=abc'), {
    realm: 'a "quoted" realm',
    nonce: 'abc',
    algorithm: 'MD5',
    qopAuth: false,
  });
});
