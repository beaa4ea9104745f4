"""inverse"""
