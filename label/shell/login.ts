// The log-in screen: e-mail address and password, and the workforce when the address belongs to
// several (the link a workforce gives its workers names it, `?workforce=wkf_...`; the field appears
// when the server asks which one, 409 workforce_required).
import { ApiError, type createApi } from '../api.ts';
import { el } from '../players/types.ts';

export function loginForm(api: ReturnType<typeof createApi>, workforceOfLink: string | null, loggedIn: () => void, message?: string) {
  const email = el('input', { id: 'email', type: 'email', autocomplete: 'username', required: '' });
  const password = el('input', { id: 'password', type: 'password', autocomplete: 'current-password', required: '' });
  const workforce = el('input', { id: 'workforce', autocomplete: 'off', value: workforceOfLink ?? '' });
  const workforceField = el(
    'div',
    { class: 'workforce' },
    el('label', { for: 'workforce' }, 'Workforce'),
    workforce,
    el('p', { class: 'hint' }, 'The workforce id from the link your workforce gave you (wkf_...), or "operator".'),
  );
  workforceField.hidden = !workforce.value;
  const error = el('p', { class: 'error', role: 'alert' }, message ?? '');
  const form = el(
    'form',
    { class: 'login', 'aria-labelledby': 'login-title' },
    el('h2', { id: 'login-title' }, 'Log in'),
    el('label', { for: 'email' }, 'E-mail address'),
    email,
    el('label', { for: 'password' }, 'Password'),
    password,
    workforceField,
    error,
    el('button', { type: 'submit', class: 'primary' }, 'Log in'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    try {
      await api.login(email.value, password.value, workforce.value.trim() || undefined);
      loggedIn();
    } catch (err) {
      error.textContent = err instanceof ApiError ? err.message : 'The server cannot be reached.';
      if (err instanceof ApiError && err.code === 'workforce_required') {
        workforceField.hidden = false;
        workforce.focus();
      }
    }
  });
  return { form, focus: () => email.focus() };
}
