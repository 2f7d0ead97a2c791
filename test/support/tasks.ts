// A task as a customer sends one, for the tests that need some task of the account rather than a
// particular one: a support ticket to file as billing or support (text categorization).
export const ticketTask = (extra: Record<string, unknown> = {}) => ({
  callback_url: 'https://example.com/cb',
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
  ...extra,
});
