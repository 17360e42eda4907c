// Car drivers.
import type { Selectable } from 'kysely';
import type { UsersTable } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { isUniqueViolation } from '../db/unique-violation.js';

const COLUMNS = ['id', 'email', 'password_hash', 'first_name', 'last_name', 'phone'] as const;

export type UserRow = Pick<Selectable<UsersTable>, (typeof COLUMNS)[number]>;

/** What the API shows of a user: never the password hash. */
export type PublicUser = Omit<UserRow, 'password_hash'>;

export interface NewUser {
  email: string;
  passwordHash: string;
  firstName: string;
  lastName: string;
  phone: string;
}

export function publicUser(row: PublicUser): PublicUser {
  return { id: row.id, email: row.email, first_name: row.first_name, last_name: row.last_name, phone: row.phone };
}

export class UserRepository {
  constructor(private readonly store: Store) {}

  findByEmail(email: string): Promise<UserRow | undefined> {
    return this.store.kysely
      .selectFrom('users')
      .select(COLUMNS)
      .where('email', '=', normalizeEmail(email))
      .executeTakeFirst();
  }

  /** The user of this id. */
  find(id: number): Promise<UserRow | undefined> {
    return this.store.kysely.selectFrom('users').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  /** Inserts a user and returns its row; undefined when the email is taken
   * (the unique constraint, on either engine), so two concurrent
   * registrations cannot both win. */
  async insert(user: NewUser, nowMs: number): Promise<UserRow | undefined> {
    try {
      return await this.store.kysely
        .insertInto('users')
        .values({
          email: normalizeEmail(user.email),
          password_hash: user.passwordHash,
          first_name: user.firstName,
          last_name: user.lastName,
          phone: user.phone,
          created_at: nowMs,
        })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
