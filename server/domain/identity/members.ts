// Members (issue 34): invitations and password links (signed, expiring, single use), roles with the
// owner rules, removal, passwords and TOTP. Each function is one transaction of the unit of work it
// is given; the HTTP layer records the activity in the same transaction (http/activity.ts).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { DomainError, invalid, notFound } from '../errors.ts';
import type { Repositories, UnitOfWork } from '../ports.ts';
import { recordActivity, type RequestOrigin } from './activity.ts';
import type { MemberLinkRecord, MemberRecord, MemberStatus } from './model.ts';
import { MemberEmailTaken } from './model.ts';
import { checkMemberPassword, checkNewPassword, hashMemberPassword, type PasswordRules } from './passwords.ts';
import { isRole, roles, type Role } from './roles.ts';

export interface MemberSettings extends PasswordRules {
  /** How long an invitation or password link works (MEMBER_LINK_TTL_SECONDS). */
  linkTtlMs: number;
}

/** Who is acting on members: a member (with a role) or a key with the admin scope, or the operator. */
export type MemberActor = { kind: 'member'; memberId: string; role: Role } | { kind: 'key' } | { kind: 'operator' };

/** At most this many members that are not removed, per account. */
const maxMembers = 1000;

const newMemberId = () => 'mbr_' + randomBytes(12).toString('hex');
const newLinkId = () => randomBytes(12).toString('hex');

/** ajv-formats' `email` (the contract's format). */
const emailPattern =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

function checkEmail(email: string): void {
  if (!emailPattern.test(email) || email.length > 254)
    throw invalid(`email must be an e-mail address of at most 254 characters, not "${email.slice(0, 300)}".`);
}

function checkRole(role: unknown): Role {
  if (!isRole(role)) throw invalid(`role "${String(role)}" does not exist (${roles.join(', ')}).`);
  return role;
}

/** Only an owner's session may make an owner or change one: an admin cannot raise anyone above itself. */
function checkOwnerRule(actor: MemberActor, touchesOwner: boolean): void {
  if (!touchesOwner || actor.kind === 'operator' || (actor.kind === 'member' && actor.role === 'owner')) return;
  throw new DomainError(
    'forbidden',
    actor.kind === 'key'
      ? 'Only an owner, logged in, may make an owner or change one; an API key may not.'
      : 'Only an owner may make an owner or change one; your role is ' + actor.role + '.',
    'role_missing',
  );
}

export async function memberOf(repos: Repositories, accountId: string, memberId: string, forUpdate = false): Promise<MemberRecord> {
  const member = /^mbr_[0-9a-f]{24}$/.test(memberId) ? await repos.members.get(accountId, memberId, { forUpdate }) : null;
  if (!member) throw notFound(`Member ${memberId} not found.`);
  return member;
}

/** A link's token, checked: the link, or a 400 naming why it does not work. */
async function usableLink(
  repos: Repositories,
  token: string,
  purpose: MemberLinkRecord['purpose'],
  now: Date,
): Promise<{ link: MemberLinkRecord; member: MemberRecord }> {
  const what = purpose === 'invitation' ? 'invitation link' : 'password link';
  const m = /^htl_([0-9a-f]{24})\.[A-Za-z0-9_-]{43}$/.exec(token);
  const link = m ? await repos.memberLinks.get(m[1]!, { forUpdate: true }) : null;
  const expected = link ? Buffer.from(repos.memberLinks.token(link)) : null;
  if (!link || !expected || expected.length !== token.length || !timingSafeEqual(expected, Buffer.from(token)))
    throw new DomainError('invalid', `This ${what} is not one of this server's (mistyped, or cut short).`, 'link_invalid');
  if (link.purpose !== purpose) throw new DomainError('invalid', `This link is not an ${what}.`, 'link_invalid');
  if (link.usedAt) throw new DomainError('invalid', `This ${what} was used already.`, 'link_used');
  if (link.voidedAt) throw new DomainError('invalid', `This ${what} was replaced by a newer one, or its member removed.`, 'link_void');
  if (link.expiresAt.getTime() <= now.getTime())
    throw new DomainError('invalid', `This ${what} expired at ${link.expiresAt.toISOString()}; ask for a new one.`, 'link_expired');
  const member = await repos.members.get(link.accountId, link.memberId, { forUpdate: true });
  if (!member || member.status === 'removed') throw new DomainError('invalid', `The member of this ${what} was removed.`, 'link_void');
  return { link, member };
}

/** A new link for a member (earlier unused ones of the purpose void): its record and token. */
export async function issueLink(
  repos: Repositories,
  member: MemberRecord,
  purpose: MemberLinkRecord['purpose'],
  settings: MemberSettings,
  now: Date,
): Promise<{ link: MemberLinkRecord; token: string }> {
  await repos.memberLinks.voidFor(member.memberId, now, purpose);
  const link: MemberLinkRecord = {
    linkId: newLinkId(),
    accountId: member.accountId,
    memberId: member.memberId,
    purpose,
    createdAt: now,
    expiresAt: new Date(now.getTime() + settings.linkTtlMs),
    usedAt: null,
    voidedAt: null,
  };
  await repos.memberLinks.insert(link);
  return { link, token: repos.memberLinks.token(link) };
}

export interface NewMember {
  email: string;
  role: unknown;
  displayName?: string | undefined;
}

async function insertMember(repos: Repositories, member: MemberRecord): Promise<void> {
  if ((await repos.members.countNotRemoved(member.accountId)) >= maxMembers)
    throw new DomainError('conflict', `An account has at most ${maxMembers} members; remove one first.`, 'member_limit');
  try {
    await repos.members.insert(member);
  } catch (err) {
    if (err instanceof MemberEmailTaken)
      throw new DomainError('conflict', `${member.email} is already a member of this account.`, 'member_exists');
    throw err;
  }
}

/** Invites a person: the member (`invited`) and the invitation link. */
export async function inviteMember(
  uow: UnitOfWork,
  accountId: string,
  input: NewMember,
  actor: MemberActor,
  settings: MemberSettings,
  now: Date,
): Promise<{ member: MemberRecord; link: MemberLinkRecord; token: string }> {
  checkEmail(input.email);
  const role = checkRole(input.role);
  checkOwnerRule(actor, role === 'owner');
  return uow.transaction(async (repos) => {
    const member: MemberRecord = {
      memberId: newMemberId(),
      accountId,
      email: input.email,
      displayName: input.displayName ?? null,
      role,
      status: 'invited',
      passwordHash: null,
      totpSecret: null,
      totpPending: null,
      totpLastStep: null,
      ssoSubject: null,
      createdAt: now,
      lastLoginAt: null,
    };
    await insertMember(repos, member);
    return { member, ...(await issueLink(repos, member, 'invitation', settings, now)) };
  });
}

/** A new invitation link for a member still invited. */
export async function reinviteMember(
  uow: UnitOfWork,
  accountId: string,
  memberId: string,
  actor: MemberActor,
  settings: MemberSettings,
  now: Date,
) {
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (member.status !== 'invited') throw invalid(`Member ${memberId} is ${member.status}, not invited: there is nothing to accept.`);
    checkOwnerRule(actor, member.role === 'owner');
    return { member, ...(await issueLink(repos, member, 'invitation', settings, now)) };
  });
}

/** Accepts an invitation: the member is active, with the password given (unless the account logs in by SSO only). */
export async function acceptInvitation(
  uow: UnitOfWork,
  input: { token: string; password?: string | undefined; displayName?: string | undefined },
  settings: MemberSettings,
  now: Date,
): Promise<MemberRecord> {
  if (input.password !== undefined) {
    const problem = checkNewPassword(input.password);
    if (problem) throw invalid(problem);
  }
  // Hashed before the transaction: a slow hash holds no lock.
  const hash = input.password !== undefined ? await hashMemberPassword(input.password, settings) : null;
  return uow.transaction(async (repos) => {
    const { link, member } = await usableLink(repos, input.token, 'invitation', now);
    const rules = await repos.accountIdentity.get(member.accountId);
    if (rules.passwordLogin && hash === null) throw invalid('password is required: this account logs in with passwords.');
    if (!rules.passwordLogin && hash !== null)
      throw invalid('password is not taken: this account logs in with single sign-on only (accept without one, then log in there).');
    const accepted: MemberRecord = {
      ...member,
      status: 'active',
      ...(hash !== null ? { passwordHash: hash } : {}),
      ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
    };
    await repos.members.update(accepted);
    await repos.memberLinks.markUsed(link.linkId, now);
    return accepted;
  });
}

/** Sets a password with a password link; every session of the member ends. */
export async function completePasswordReset(
  uow: UnitOfWork,
  input: { token: string; password: string },
  settings: MemberSettings,
  now: Date,
): Promise<MemberRecord> {
  const problem = checkNewPassword(input.password);
  if (problem) throw invalid(problem);
  const hash = await hashMemberPassword(input.password, settings);
  return uow.transaction(async (repos) => {
    const { link, member } = await usableLink(repos, input.token, 'password', now);
    const changed: MemberRecord = { ...member, status: 'active', passwordHash: hash };
    await repos.members.update(changed);
    await repos.memberLinks.markUsed(link.linkId, now);
    await repos.memberSessions.endAll(member.memberId, now);
    return changed;
  });
}

/** A password link for an active member (an admin's, or the one `accounts create` prints). */
export async function passwordLinkFor(
  uow: UnitOfWork,
  accountId: string,
  memberId: string,
  actor: MemberActor,
  settings: MemberSettings,
  now: Date,
) {
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (member.status === 'removed') throw invalid(`Member ${memberId} was removed.`);
    checkOwnerRule(actor, member.role === 'owner');
    return { member, ...(await issueLink(repos, member, 'password', settings, now)) };
  });
}

/** Locks the active owners and refuses a change that would leave none. */
async function keepAnOwner(repos: Repositories, member: MemberRecord, stillOwner: boolean): Promise<void> {
  if (member.role !== 'owner' || member.status !== 'active' || stillOwner) return;
  const owners = await repos.members.activeOwners(member.accountId);
  if (owners.every((o) => o.memberId === member.memberId))
    throw new DomainError(
      'invalid',
      `${member.memberId} is the account's last active owner; make another member owner first.`,
      'last_owner',
    );
}

export async function updateMember(
  uow: UnitOfWork,
  accountId: string,
  memberId: string,
  changes: { role?: unknown; displayName?: string | undefined },
  actor: MemberActor,
): Promise<{ before: MemberRecord; after: MemberRecord }> {
  const role = changes.role === undefined ? undefined : checkRole(changes.role);
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (member.status === 'removed') throw invalid(`Member ${memberId} was removed and cannot be changed.`);
    if (role !== undefined && role !== member.role) {
      checkOwnerRule(actor, role === 'owner' || member.role === 'owner');
      await keepAnOwner(repos, member, role === 'owner');
    }
    const after: MemberRecord = {
      ...member,
      ...(role !== undefined ? { role } : {}),
      ...(changes.displayName !== undefined ? { displayName: changes.displayName } : {}),
    };
    await repos.members.update(after);
    return { before: member, after };
  });
}

/** Removes a member: sessions ended, links void, the record kept. Removing twice changes nothing. */
export async function removeMember(uow: UnitOfWork, accountId: string, memberId: string, actor: MemberActor, now: Date) {
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (member.status === 'removed') return member;
    checkOwnerRule(actor, member.role === 'owner');
    await keepAnOwner(repos, member, false);
    const removed: MemberRecord = { ...member, status: 'removed' };
    await repos.members.update(removed);
    await repos.memberSessions.endAll(memberId, now);
    await repos.memberLinks.voidFor(memberId, now);
    return removed;
  });
}

export async function listMembers(uow: UnitOfWork, accountId: string, status?: MemberStatus) {
  return uow.members.list(accountId, status);
}

/** Changes the member's own password, given the current one; the member's other sessions end. */
export async function changeOwnPassword(
  uow: UnitOfWork,
  accountId: string,
  memberId: string,
  input: { currentPassword: string; password: string },
  currentSession: string,
  settings: MemberSettings,
  now: Date,
  origin?: RequestOrigin,
): Promise<number | 'wrong_password'> {
  const problem = checkNewPassword(input.password);
  if (problem) throw invalid(problem);
  const member = await memberOf(uow, accountId, memberId);
  if (!(await checkMemberPassword(input.currentPassword, member.passwordHash, settings))) return 'wrong_password';
  const hash = await hashMemberPassword(input.password, settings);
  return uow.transaction(async (repos) => {
    const locked = await memberOf(repos, accountId, memberId, true);
    await repos.members.update({ ...locked, passwordHash: hash });
    const ended = await repos.memberSessions.endAll(memberId, now, currentSession);
    await recordActivity(repos, {
      accountId,
      action: 'member.password_changed',
      actor: { type: 'member', id: memberId, name: locked.email },
      target: { type: 'member', id: memberId },
      at: now,
      origin,
      details: { ended_sessions: ended },
    });
    return ended;
  });
}

// ---- TOTP (RFC 6238): SHA-1, 6 digits, 30-second steps, one step of drift either way. ----

const totpOf = (secret: string, label: string, issuer: string) =>
  new TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });

/** The time step a code is good for (within one step of `now`), or null. */
function totpStep(secret: string, code: string, now: Date): number | null {
  const delta = totpOf(secret, 'x', 'x').validate({ token: code, timestamp: now.getTime(), window: 1 });
  return delta === null ? null : Math.floor(now.getTime() / 30_000) + delta;
}

/** Checks a code of the member's confirmed secret, once: a step at or before the last used is refused. */
export function acceptTotp(member: MemberRecord, code: string, now: Date): number | null {
  if (!member.totpSecret) return null;
  const step = totpStep(member.totpSecret, code, now);
  if (step === null || (member.totpLastStep !== null && step <= member.totpLastStep)) return null;
  return step;
}

export async function beginTotp(uow: UnitOfWork, accountId: string, accountName: string, memberId: string) {
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (member.totpSecret)
      throw new DomainError('conflict', 'TOTP is on already; turn it off first to set up another device.', 'totp_enabled');
    const secret = new Secret({ size: 20 }).base32;
    await repos.members.update({ ...member, totpPending: secret });
    const issuer = `humantask ${accountName}`;
    return { secret, uri: totpOf(secret, member.email, issuer).toString() };
  });
}

export async function confirmTotp(uow: UnitOfWork, accountId: string, memberId: string, code: string, now: Date) {
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (member.totpSecret) throw invalid('TOTP is on already.');
    if (!member.totpPending) throw invalid('There is no TOTP set-up to confirm: begin one with POST /v1/me/totp.');
    const step = totpStep(member.totpPending, code, now);
    if (step === null)
      throw new DomainError('invalid', 'code is not a current code of the new secret (check the device clock).', 'totp_invalid');
    const enabled: MemberRecord = { ...member, totpSecret: member.totpPending, totpPending: null, totpLastStep: step };
    await repos.members.update(enabled);
    return enabled;
  });
}

export async function disableOwnTotp(uow: UnitOfWork, accountId: string, memberId: string, code: string, now: Date) {
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (!member.totpSecret) throw invalid('TOTP is off already.');
    if ((await repos.accountIdentity.get(accountId)).requireTotp) throw invalid('This account requires TOTP: it cannot be turned off.');
    if (acceptTotp(member, code, now) === null) throw new DomainError('invalid', 'code is not a current code.', 'totp_invalid');
    const off: MemberRecord = { ...member, totpSecret: null, totpPending: null, totpLastStep: null };
    await repos.members.update(off);
    return off;
  });
}

/** An admin turns a member's TOTP off (a lost device): sessions end. */
export async function resetMemberTotp(uow: UnitOfWork, accountId: string, memberId: string, actor: MemberActor, now: Date) {
  return uow.transaction(async (repos) => {
    const member = await memberOf(repos, accountId, memberId, true);
    if (member.status === 'removed') throw invalid(`Member ${memberId} was removed.`);
    checkOwnerRule(actor, member.role === 'owner');
    const off: MemberRecord = { ...member, totpSecret: null, totpPending: null, totpLastStep: null };
    await repos.members.update(off);
    await repos.memberSessions.endAll(memberId, now);
    return off;
  });
}

/** The first owner of an account (`humantask accounts create --owner`, the development account): active, no password yet. */
export async function addOwner(
  repos: Repositories,
  accountId: string,
  email: string,
  settings: MemberSettings,
  now: Date,
  password?: string,
): Promise<{ member: MemberRecord; link?: MemberLinkRecord; token?: string }> {
  checkEmail(email);
  const member: MemberRecord = {
    memberId: newMemberId(),
    accountId,
    email,
    displayName: null,
    role: 'owner',
    status: 'active',
    passwordHash: password !== undefined ? await hashMemberPassword(password, settings) : null,
    totpSecret: null,
    totpPending: null,
    totpLastStep: null,
    ssoSubject: null,
    createdAt: now,
    lastLoginAt: null,
  };
  await insertMember(repos, member);
  if (password !== undefined) return { member };
  return { member, ...(await issueLink(repos, member, 'password', settings, now)) };
}
