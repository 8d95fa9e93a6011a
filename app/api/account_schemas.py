"""The bodies of the accounts' routes (pydantic: their OpenAPI schemas and 422 wording)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictInt, StrictStr

from app.api.passwords import MAX_LENGTH, password_problem
from app.api.schemas import Reason, Strict

# As the floor file's operator names (app/config/floor_file.py): they appear in paths.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
AccountName = Annotated[StrictStr, Field(pattern=NAME_PATTERN, examples=["sue"])]
RoleName = Literal["operator", "supervisor", "auditor"]


def _password(text: str) -> str:
    problem = password_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


Password = Annotated[StrictStr, Field(max_length=MAX_LENGTH), AfterValidator(_password)]
DisplayName = Annotated[StrictStr, Field(min_length=1, max_length=100)]


class AccountRequest(Strict):
    name: AccountName
    display_name: DisplayName
    role: RoleName
    password: Password


class ReasonRequest(Strict):
    reason: Reason


class PasswordRequest(Strict):
    password: Password


class RoleRequest(Strict):
    role: RoleName


class SignInRequest(Strict):
    # Not the account rules: a sign-in is refused alike whatever was typed.
    name: Annotated[StrictStr, Field(max_length=200)]
    password: Annotated[StrictStr, Field(max_length=1_000)]


class TokenRequest(Strict):
    name: DisplayName
    # How long the token works, in days (at most a year).
    days: Annotated[StrictInt, Field(ge=1, le=366)] = 90
