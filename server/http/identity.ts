// Handlers of tag Identity (issue 34): members, sessions, single sign-on, scoped API keys and the
// activity log. Not served yet: the contract comes first.
import { HttpError } from './errors.ts';
import type { HandlerTable, Operations } from './typed.ts';

type IdentityOperation =
  | 'loginMember'
  | 'getMemberSession'
  | 'logoutMember'
  | 'listMemberSessions'
  | 'logoutMemberEverywhere'
  | 'deleteMemberSession'
  | 'setMemberPassword'
  | 'createTotpEnrollment'
  | 'confirmTotpEnrollment'
  | 'deleteOwnTotp'
  | 'acceptInvitation'
  | 'createPasswordReset'
  | 'completePasswordReset'
  | 'listMembers'
  | 'inviteMember'
  | 'getMember'
  | 'updateMember'
  | 'removeMember'
  | 'createMemberInvitation'
  | 'createMemberPasswordReset'
  | 'resetMemberTotp'
  | 'getAccountSecurity'
  | 'updateAccountSecurity'
  | 'getSsoSettings'
  | 'setSsoSettings'
  | 'deleteSsoSettings'
  | 'startSsoLogin'
  | 'completeSsoLogin'
  | 'listApiKeys'
  | 'createApiKey'
  | 'getApiKey'
  | 'deleteApiKey'
  | 'listActivity';

const notYet = async (): Promise<never> => {
  throw new HttpError(501, 'Not implemented yet.', {}, 'not_implemented');
};

export function identityHandlers(): Pick<HandlerTable<Operations['current']>, IdentityOperation> {
  return {
    loginMember: notYet,
    getMemberSession: notYet,
    logoutMember: notYet,
    listMemberSessions: notYet,
    logoutMemberEverywhere: notYet,
    deleteMemberSession: notYet,
    setMemberPassword: notYet,
    createTotpEnrollment: notYet,
    confirmTotpEnrollment: notYet,
    deleteOwnTotp: notYet,
    acceptInvitation: notYet,
    createPasswordReset: notYet,
    completePasswordReset: notYet,
    listMembers: notYet,
    inviteMember: notYet,
    getMember: notYet,
    updateMember: notYet,
    removeMember: notYet,
    createMemberInvitation: notYet,
    createMemberPasswordReset: notYet,
    resetMemberTotp: notYet,
    getAccountSecurity: notYet,
    updateAccountSecurity: notYet,
    getSsoSettings: notYet,
    setSsoSettings: notYet,
    deleteSsoSettings: notYet,
    startSsoLogin: notYet,
    completeSsoLogin: notYet,
    listApiKeys: notYet,
    createApiKey: notYet,
    getApiKey: notYet,
    deleteApiKey: notYet,
    listActivity: notYet,
  };
}
