/** The test vectors of crypto-formats.md, verbatim. */

/** §2: RFC 6979 A.2.5 key, purejs stamper, payload "sample" (its s is high). */
export const STAMP_VECTOR = {
  privHex: 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721',
  payload: 'sample',
  json: '{"publicKey":"0360fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6","scheme":"SIGNATURE_SCHEME_TK_API_P256","signature":"3046022100efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716022100f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"}',
  header:
    'eyJwdWJsaWNLZXkiOiIwMzYwZmVkNGJhMjU1YTlkMzFjOTYxZWI3NGM2MzU2ZDY4YzA0OWI4OTIzYjYxZmE2Y2U2Njk2MjJlNjBmMjlmYjYiLCJzY2hlbWUiOiJTSUdOQVRVUkVfU0NIRU1FX1RLX0FQSV9QMjU2Iiwic2lnbmF0dXJlIjoiMzA0NjAyMjEwMGVmZDQ4YjJhYWNiNmE4ZmQxMTQwZGQ5Y2Q0NWU4MWQ2OWQyYzg3N2I1NmFhZjk5MWMzNGQwZWE4NGVhZjM3MTYwMjIxMDBmN2NiMWM5NDJkNjU3YzQxZDQzNmM3YTFiNmUyOWY2NWYzZTkwMGRiYjlhZmY0MDY0ZGM0YWIyZjg0M2FjZGE4In0',
  pub: '0360fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6',
};

/** §3.5: HPKE / encryptedOtpBundle. */
export const HPKE_VECTOR = {
  targetPrivHex: 'f2193bcc3182a3307dc45655cfec939868cd5bb37728be10ec358a327917313e',
  targetPublicHex:
    '04524680b203761953fe6ae271cb8ed7da6c356e7a21ef4f3f7a35afcee2ce1139b95ef8e7de80c8b0b635381fe3d0fbdfe6bb195deaf5a54eca758e98c4532032',
  ephemeralPrivHex: 'd1e4369a81b3774007e0fb65755245819299d324f8e5da7af38df4b2a7ac8a68',
  plaintext:
    '{"otp_code":"000000","public_key":"04427ece4ef7d3ef5cc02c449a3f62216e97281aed5e883483056dbcbc8f7605b63130461d387886e2734fbebe3c1a56f21f16bb2c91c5dce63477c62005f97081"}',
  tekPublicHex:
    '04427ece4ef7d3ef5cc02c449a3f62216e97281aed5e883483056dbcbc8f7605b63130461d387886e2734fbebe3c1a56f21f16bb2c91c5dce63477c62005f97081',
  encryptedOtpBundle:
    '{"encappedPublic":"049a4ecac3b62d15da6bb62d98d30dd82528ed23a13fe6884f1e849405daa8a4f6d2a17c14e647c01a63185e34cc61f1202e2c139da85fe486cc946bf06e708598","ciphertext":"eef4272755db520b7c084e36709d6759d70580542e8360d20a7903427a9864d0b4dd5674ea6fbab19037935100cdf709bf27f18f2b64c2fa11335bd1b428edf79e883761b1c6948c17ba001663de138a385971e256fae2ec10bfb870aaca7db80af6ab2fd08de7ccb3ac418515cd54ae2371ff39894504efcabd65dc856b7c5e31970c43f88420d015a9e60e9527f919fcd36ecd2be7e14b37550cf78f141b5b28f2dcd9d9c428881f0645438e17cea46cefe675fd8434"}',
};

/** §4: encryptedSessionSigningKey. */
export const SESSION_KEY_VECTOR = {
  clientPrivHex: '119310b78b88e957323947ae2b729ae36580bd36510787f3f3e3c1f87ba0ba0d',
  clientPublicKey:
    '04b95c8108c86bbd20f16a155f3e88e09455b2016e5289cae7bf3382222a713f984e54a333e4b131f05852b9aa6597e4aaf8a1d8ea8664064ce5993798db1d3c24',
  ephemeralPrivHex: '3a3cca88aae8aaec5585eba64a17828a8445dcc260b5e62fd176e7b361159503',
  sessionPrivHex: 'ed6676386ff68a26d2d6f374a1c057a1a60df2766a1d4f4b63c735258cf3963c',
  sessionPubCompressed: '035853ba46c968bc75ea1dfde86cfe795afe3a6f3947cef00f39f0600e6c64b239',
  encryptedSessionSigningKey:
    'hjBQPzQSDfSzvLd7uG3zv5VTK4FJCUwVP9V6YwfJ3qxzZpRyTXNvyLfcyoNQkHmebX8yffCreujQ2aReUmRaKRGCd4SnVwZ8ycZ9jbEv2vQiZmF9G5J',
  /** The OpenAPI example value: 81 bytes with a 02 prefix. */
  openApiExample: 'w99a5xV6A75TfoAUkZn869fVyDYvgVsKrawMALZXmrauZd8hEv66EkPU1Z42CUaHESQjcA5bqd8dynTGBMLWB9ewtXWPEVbZvocB4Tw2K1vQVp7uwjf',
};

/** §6 and the OpenAPI examples: OIDC nonce for the docs' key, and the example ID token. */
export const OIDC_VECTOR = {
  /** The OpenAPI verify example's (compressed) clientPublicKey; §6 quotes its uncompressed form `04f45f2a…78be2`. */
  compressedKey: '02f45f2a22c908b9ce09a7150e514afd24627c401c38a4afc164e1ea783adaaa31',
  uncompressedNonce: '4b291f88b726d517661ed1a509fd2d8f7a006d1c377d876fec09de6997ba8066',
  exampleToken:
    'eyJhbGciOiJSUzI1NiIsImtpZCI6ImFiYzEyMyIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL2FjY291bnRzLmdvb2dsZS5jb20iLCJzdWIiOiIxMTIyMzM0NDU1IiwiYXVkIjoiMTIzNDU2Ny5hcHBzLmdvb2dsZXVzZXJjb250ZW50LmNvbSIsImVtYWlsIjoidXNlckBleGFtcGxlLmNvbSIsImlhdCI6MTc0NjczNjUwOSwiZXhwIjoxNzQ2NzQwMTA5fQ.-3_ETmSGOl4wGNLR1QSOMlHk5IvADpX3YdHFmTH9KmRu6sEhM20RsURjKrI4-_EKj7J_HtsdS1tCHm0iw2J0qtoczYFQqEW_U9qJD6QsuvTFx8Fj9rFa3ieYhZKi3kkBu6cADogUiudP50kf9345ATys2GrYm-ba5esgReW1WzGJG3SgCyIDnHFfxmeLjE2YE9EFxT73To3mPYAk0ywPL2MpFFV9F8I3PsnbDAxinaY75GeA8vJXATr8weEIXqHD2lxmXVE95qd2ZlcuyLUaEYyp9GXcOnx7SjhdJG88jl5BZQvxOVgBMo42iGjK674lSwsMiHpzLX98j6C786Rd9Q',
  exampleIat: 1746736509,
};

/** §5: the real-browser registration example of the OpenAPI document (fmt none, rpID dev.dontneeda.pw). */
export const PASSKEY_REGISTRATION_EXAMPLE = {
  /** The challenge inside clientData (the body's `ArkQi…` differs by one letter — an OpenAPI inconsistency). */
  clientDataChallenge: 'ArKQi2yAYHPlgnJNFBlneIwchQdWXBOTrdB-AmMUB21Lx',
  bodyChallenge: 'ArkQi2yAYHPlgnJNFBlneIwchQdWXBOTrdB-AmMUB21Lx',
  attestation: {
    credentialId: 'AdKXJEch1aV5Wo7bj7qLHskVY4OoNaj9qu8TPdJ7kSAgUeRxWNngXlcNIGt4gexZGKVGcqZpqqWordXb_he1izY',
    clientDataJson:
      'eyJjaGFsbGVuZ2UiOiJBcktRaTJ5QVlIUGxnbkpORkJsbmVJd2NoUWRXWEJPVHJkQi1BbU1VQjIxTHgiLCJjbGllbnRFeHRlbnNpb25zIjp7fSwiaGFzaEFsZ29yaXRobSI6IlNIQS0yNTYiLCJvcmlnaW4iOiJodHRwczovL2Rldi5kb250bmVlZGEucHciLCJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0',
    attestationObject:
      'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjFPdxHEOnAiLIp26idVjIguzn3Ipr_RlsKZWsa-5qK-KBFAAAAAAAAAAAAAAAAAAAAAAAAAAAAQQHSlyRHIdWleVqO24-6ix7JFWODqDWo_arvEz3Se5EgIFHkcVjZ4F5XDSBreIHsWRilRnKmaaqlqK3V2_4XtYs2pQECAyYgASFYID5PQTZQQg6haZFQWFzqfAOyQ_ENsMH8xxQ4GRiNPsqrIlggU8IVUOV8qpgk_Jh-OTaLuZL52KdX1fTht07X4DiQPow',
    transports: ['internal', 'hybrid'],
  },
};
