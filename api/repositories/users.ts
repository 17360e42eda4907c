// Car drivers.
import type { Db } from '../db/open.js';

export interface UserRow {
  id: number;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  phone: string;
}

/** What the API shows of a user: never the password hash. */
export interface PublicUser {
  id: number;
  email: string;
  first_name: string;
  last_name: string;
  phone: string;
}

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
  private readonly byEmail;
  private readonly byId;
  private readonly insertRow;

  constructor(db: Db) {
    const columns = 'id, email, password_hash, first_name, last_name, phone';
    this.byEmail = db.prepare<[string], UserRow>(`SELECT ${columns} FROM users WHERE email = ?`);
    this.byId = db.prepare<[number], UserRow>(`SELECT ${columns} FROM users WHERE id = ?`);
    this.insertRow = db.prepare<[string, string, string, string, string, number]>(
      'INSERT INTO users (email, password_hash, first_name, last_name, phone, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
  }

  findByEmail(email: string): UserRow | undefined {
    return this.byEmail.get(normalizeEmail(email));
  }

  findById(id: number): UserRow | undefined {
    return this.byId.get(id);
  }

  /** Inserts a user; returns undefined when the email is taken (unique index),
   * so two concurrent registrations cannot both win. */
  insert(user: NewUser, nowMs: number): number | undefined {
    try {
      const result = this.insertRow.run(
        normalizeEmail(user.email),
        user.passwordHash,
        user.firstName,
        user.lastName,
        user.phone,
        nowMs,
      );
      return Number(result.lastInsertRowid);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
      throw error;
    }
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
